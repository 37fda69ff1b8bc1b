//! Random struct layouts: nested structs and arrays of every scalar type,
//! written field by field through a pointer to an array of them and read
//! back. The C compiler lays the structs out itself; the JIT and the
//! interpreter use augur's offsets. The bytes each leaves in the buffer
//! (padding included, which nobody writes) and the sum it reads back must
//! agree, so any offset or size that differs from C's shows.
//!
//! `AUGUR_LAYOUT_CASES` (default 60, 25 in debug builds) and
//! `AUGUR_LAYOUT_SEED` run more.

use crate::fuzz_env;

use augur::exec::compile::compile;
use augur::exec::interp::Interpreter;
use augur::exec::CompileOptions;
use augur::ir::Function;
use augur_rng::Rng;
use std::fmt::Write;

const SCALARS: [(&str, &str); 10] = [
    ("u8", "uint8_t"),
    ("i8", "int8_t"),
    ("i16", "int16_t"),
    ("u16", "uint16_t"),
    ("i32", "int32_t"),
    ("u32", "uint32_t"),
    ("i64", "int64_t"),
    ("u64", "uint64_t"),
    ("f32", "float"),
    ("f64", "double"),
];

/// A struct's fields, as text-form types, and the leaves under each: the
/// path from the field (`.a.b`, `[2]`) and the leaf's scalar type.
struct Shape {
    defs: String,
    leaves: Vec<(String, &'static str)>,
}

/// Defines `struct S{k}` with 1–4 fields (scalars, arrays of scalars,
/// earlier structs); gives its leaves.
#[augur::staged]
fn define(
    rng: &mut Rng,
    k: usize,
    shape: &mut Shape,
    leaves_of: &mut Vec<Vec<(String, &'static str)>>,
) {
    let n = 1 + rng.below(4) as usize;
    let mut fields = Vec::new();
    let mut leaves = Vec::new();
    for i in 0..n {
        let name = format!("f{i}");
        match rng.below(3) {
            0 if k > 0 => {
                let inner = rng.below(k as u64) as usize;
                fields.push(format!("{name}: struct S{inner}"));
                for (p, t) in &leaves_of[inner] {
                    leaves.push((format!(".{name}{p}"), *t));
                }
            }
            1 => {
                let (t, _) = rng.pick(&SCALARS);
                let len = 1 + rng.below(3);
                fields.push(format!("{name}: [{t}; {len}]"));
                for j in 0..len {
                    leaves.push((format!(".{name}[{j}]"), t));
                }
            }
            _ => {
                let (t, _) = rng.pick(&SCALARS);
                fields.push(format!("{name}: {t}"));
                leaves.push((format!(".{name}"), t));
            }
        }
    }
    let _ = writeln!(shape.defs, "struct S{k} {{ {} }}", fields.join(", "));
    leaves_of.push(leaves.clone());
    shape.leaves = leaves;
}

/// `fn layout(p: *mut struct S{top}) -> f64`: writes a distinct value to each
/// leaf of `p[0]` and `p[1]`, then sums them all read back as `f64`.
#[augur::staged]
fn program(rng: &mut Rng) -> String {
    let mut shape = Shape {
        defs: String::new(),
        leaves: Vec::new(),
    };
    let mut leaves_of = Vec::new();
    let count = 1 + rng.below(4) as usize;
    for k in 0..count {
        define(rng, k, &mut shape, &mut leaves_of);
    }
    let top = count - 1;
    let mut body = String::new();
    let mut value = 1;
    for e in 0..2 {
        for (path, t) in &shape.leaves {
            let lit = match *t {
                "f32" | "f64" => format!("{value}.5{t}"),
                _ => format!("{value}{t}"),
            };
            let _ = writeln!(body, "  p[{e}]{path} = {lit};");
            value += 1;
        }
    }
    let mut sum = String::from("0.0");
    for e in 0..2 {
        for (path, _) in &shape.leaves {
            let _ = write!(sum, " + (p[{e}]{path} as f64)");
        }
    }
    let text = format!(
        "{}fn layout(p: *mut struct S{top}) -> f64 {{\n{body}  return {sum};\n}}\n",
        shape.defs
    );
    text
}

#[test]
#[augur::staged]
fn random_struct_layouts_agree_with_the_c_compiler() {
    let count = fuzz_env::cases("AUGUR_LAYOUT_CASES") as usize;
    let seed = fuzz_env::seed("AUGUR_LAYOUT_SEED", 0x1a70_0751);
    let mut rng = Rng(seed);
    let opts = CompileOptions::default();
    for case in 0..count {
        let text = program(&mut rng);
        let f: Function =
            augur::ir::parse(&text).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        let augur::ir::Type::Ptr { to, .. } = f.vars[f.params[0]].ty else {
            unreachable!()
        };
        let size = to.size().unwrap() as usize;
        let c = augur::codegen::write_function(&f);
        let lib = compile(&c, &opts).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        let jit = augur::exec::jit::compile_function(&f, &opts).unwrap();
        let what = || format!("case {case}:\n{text}\n{c}");
        let mut c_buf = vec![0xAAu8; 2 * size];
        let mut jit_buf = vec![0xAAu8; 2 * size];
        // SAFETY: `layout` writes and reads two structs of `size` bytes (as
        // the interpreter, which checks every access, confirms below).
        let (c_sum, jit_sum) = unsafe {
            let cf = lib
                .symbol::<unsafe extern "C" fn(*mut u8) -> f64>("layout")
                .unwrap();
            let jf = jit
                .symbol::<unsafe extern "C" fn(*mut u8) -> f64>("layout")
                .unwrap();
            (cf(c_buf.as_mut_ptr()), jf(jit_buf.as_mut_ptr()))
        };
        let mut it = Interpreter::new();
        let p = it.memory_mut().alloc_slice(&vec![0xAAu8; 2 * size]);
        let sum = it
            .call(&f, &[p])
            .unwrap_or_else(|e| panic!("{e}\n{}", what()));
        let it_buf = it.memory().read_slice::<u8>(p, 2 * size).unwrap();
        assert_eq!(c_buf, it_buf, "{}", what());
        assert_eq!(c_buf, jit_buf, "{}", what());
        assert_eq!(sum, c_sum.into(), "{}", what());
        assert_eq!(c_sum.to_bits(), jit_sum.to_bits(), "{}", what());
    }
}

/// The C compiler's `sizeof` and `offsetof` against augur's, on a struct
/// with every kind of padding.
#[test]
#[augur::staged]
fn sizes_and_offsets_are_the_c_compilers() {
    let f = augur::ir::parse(
        "struct A { a: u8, b: f64, c: u16 }\nstruct B { x: u8, inner: struct A, y: [u8; 3], z: i32 }\nfn g(p: *mut struct B) {\n  p[0].z = 1;\n}\n",
    )
    .unwrap();
    let augur::ir::Type::Ptr { to, .. } = f.vars[f.params[0]].ty else {
        unreachable!()
    };
    let augur::ir::Type::Struct(b) = to else {
        unreachable!()
    };
    let c = format!(
        "{}\nsize_t sizes[6] = {{ sizeof(A), sizeof(B), offsetof(B, inner), offsetof(B, y), offsetof(B, z), offsetof(A, c) }};\n",
        augur::codegen::write_function(&f)
    );
    let lib = compile(&c, &CompileOptions::default()).unwrap();
    // SAFETY: `sizes` is an array of 6 `size_t`.
    let sizes = unsafe { *lib.symbol::<*const [usize; 6]>("sizes").unwrap() };
    let augur::ir::Type::Struct(a) = b.fields[1].1 else {
        unreachable!()
    };
    let ours = [
        b.fields[1].1.size().unwrap() as usize,
        to.size().unwrap() as usize,
        b.offset(1) as usize,
        b.offset(2) as usize,
        b.offset(3) as usize,
        a.offset(2) as usize,
    ];
    assert_eq!(sizes, ours);
}
