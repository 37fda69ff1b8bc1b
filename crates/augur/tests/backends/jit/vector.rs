//! Vectorized loops: element-wise loops of every lane type, run for every
//! trip count around the vector width and with the pointers aliasing in
//! every way (the run-time check must send overlapping calls to the scalar
//! loop), give the bytes C and the interpreter give. Loops the vector code
//! would get wrong stay scalar.

use augur::exec::{compile, jit, CompileOptions, Interpreter, Value};
use augur::ir::Function;

/// Elements of each of the three arrays in the test region.
const LEN: usize = 40;

/// One loop: the body of `fn case(a: *mut T, b: *mut T, out: *mut T, n: i32)`.
struct Case {
    ty: &'static str,
    body: &'static str,
    /// Whether the JIT must vectorize its loop.
    vector: bool,
}

const CASES: &[Case] = &[
    // The fused convolution and ReLU of the nn DSL.
    Case {
        ty: "f32",
        body: "let w0: f32 = b[0]; let w1: f32 = b[1]; let w2: f32 = b[2];
               for (var i: i32 = 0; i < n; i = i + 1) {
                 let v: f32 = a[i] * w0 + a[i + 1] * w1 + a[i + 2] * w2;
                 out[i] = v >= 1.5f32 ? v : 0.0f32;
               }",
        vector: true,
    },
    Case {
        ty: "i32",
        body: "for (var i: i32 = 0; i < n; i = i + 1) {
                 var x: i32 = a[i] * 3 + b[i];
                 x = x ^ (a[i] - b[i]);
                 out[i] = -x + ~b[i] | 1;
               }",
        vector: true,
    },
    Case {
        ty: "f64",
        body: "for (var i: i32 = 0; i < n; i = i + 1) {
                 let x: f64 = a[i];
                 let y: f64 = b[i];
                 let m: bool = x < y && !(x == 0.0);
                 out[i] = m ? x / y : -y;
               }",
        vector: true,
    },
    Case {
        ty: "u64",
        body: "for (var i: i32 = 0; i < n; i = i + 1) {
                 out[i] = a[i] > b[i] ? a[i] - b[i] : b[i] * 5u64;
               }",
        vector: false, // the select's arms read memory
    },
    Case {
        ty: "u64",
        body: "for (var i: i32 = 0; i < n; i = i + 1) {
                 let x: u64 = a[i]; let y: u64 = b[i];
                 out[i] = x > y ? x - y : y * 5u64;
               }",
        vector: true,
    },
    Case {
        ty: "i64",
        body: "var k: i64 = 3i64;
               for (var i: i64 = 1i64; i < (n as i64) - 1i64; i = i + 1i64) {
                 let x: i64 = a[i + k];
                 let y: i64 = b[i];
                 out[k + i] = x <= y ? x : y + k;
               }",
        vector: true,
    },
    // In place: every access through the stored pointer uses one index.
    Case {
        ty: "f32",
        body: "for (var i: i32 = 0; i < n; i = i + 1) { a[i] = a[i] * 2.0f32 - b[i]; }",
        vector: true,
    },
    // A recurrence: iteration i reads what i - 1 wrote. Stays scalar.
    Case {
        ty: "i32",
        body: "for (var i: i32 = 1; i < n; i = i + 1) { out[i] = out[i - 1] + a[i]; }",
        vector: false,
    },
    Case {
        ty: "i32",
        body: "for (var i: i32 = 0; i < n; i = i + 1) { out[i + 1] = out[i] * 3 + a[i]; }",
        vector: false,
    },
    Case {
        ty: "i32",
        body: "for (var i: i32 = 0; i < n; i = i + 1) { a[i] = a[i + 1] + 1; }",
        vector: false,
    },
    // The induction variable as a value, a loop-carried sum: scalar.
    Case {
        ty: "i32",
        body: "for (var i: i32 = 0; i < n; i = i + 1) { out[i] = i; }",
        vector: false,
    },
    Case {
        ty: "f32",
        body: "var s: f32 = 0.0f32;
               for (var i: i32 = 0; i < n; i = i + 1) { s = s + a[i]; }
               out[0] = s;",
        vector: false,
    },
];

/// (a, b, out) as element offsets into the region: apart, then aliasing.
const LAYOUTS: [[usize; 3]; 5] = [
    [0, LEN, 2 * LEN],
    [0, LEN, 0],
    [0, LEN, 1],
    [1, LEN, 0],
    [0, LEN + 1, LEN],
];

type CaseFn = unsafe extern "C" fn(*mut u8, *mut u8, *mut u8, i32);

#[augur::staged]
fn function(i: usize, c: &Case) -> Function {
    let t = c.ty;
    let text = format!(
        "fn case_{i}(a: *mut {t}, b: *mut {t}, out: *mut {t}, n: i32) {{\n{}\n}}",
        c.body
    );
    augur::ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The test region: small values of the case's type (exact in floats,
/// some negative), three arrays of `LEN`, in 8-byte words (aligned).
#[augur::staged]
fn region(ty: &str) -> Vec<u64> {
    let vals = (0..3 * LEN as i64 + 4).map(|k| (k * 7 + 3) % 19 - 9);
    let mut out = Vec::new();
    for v in vals {
        match ty {
            "f32" => out.extend((v as f32 / 4.0).to_le_bytes()),
            "f64" => out.extend((v as f64 / 4.0).to_le_bytes()),
            "i32" => out.extend((v as i32).to_le_bytes()),
            "u32" => out.extend((v as u32).to_le_bytes()),
            _ => out.extend(v.to_le_bytes()),
        }
    }
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8 bytes"));
    out.chunks(8).map(word).collect()
}

#[augur::staged]
fn size(ty: &str) -> usize {
    if ty.ends_with("32") {
        4
    } else {
        8
    }
}

#[test]
#[augur::staged]
fn vector_loops_equal_c_and_the_interpreter_whatever_the_aliasing() {
    let fs: Vec<Function> = CASES
        .iter()
        .enumerate()
        .map(|(i, c)| function(i, c))
        .collect();
    let refs: Vec<&Function> = fs.iter().collect();
    let lib = compile(
        &augur::codegen::write_module(&refs),
        &CompileOptions::default(),
    )
    .unwrap();
    let code = jit::compile_module(&refs, &CompileOptions::default()).unwrap();
    let mut compared = 0;
    for (i, (case, f)) in CASES.iter().zip(&fs).enumerate() {
        let name = format!("case_{i}");
        // SAFETY: every case is `void case(T *, T *, T *, int32_t)`.
        let (c_fn, jit_fn): (CaseFn, CaseFn) =
            unsafe { (lib.symbol(&name).unwrap(), code.symbol(&name).unwrap()) };
        for layout in LAYOUTS {
            for n in 0..=13 {
                compare(case.ty, f, layout, n, c_fn, jit_fn);
                compared += 1;
            }
        }
        let alone = jit::compile_function(f, &CompileOptions::default()).unwrap();
        let want = usize::from(case.vector);
        assert_eq!(alone.vectorized_loops(), want, "case {i}:\n{f}");
    }
    assert_eq!(compared, CASES.len() * LAYOUTS.len() * 14);
}

/// Random element-wise loops (a fixed seed; `AUGUR_VECTOR_CASES` and
/// `AUGUR_VECTOR_SEED` for more):
/// loads at small offsets from all three pointers, locals, masks, selects
/// (some with loads in their arms, which keep a loop scalar), stores
/// through `out` or `a`; each run through C, the JIT and the interpreter
/// for trip counts around the vector width and every layout.
#[test]
fn random_element_wise_loops_equal_c_and_the_interpreter() {
    let count: usize = std::env::var("AUGUR_VECTOR_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let types = ["f32", "i32", "u32", "f64", "i64", "u64"];
    let seed = std::env::var("AUGUR_VECTOR_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0x9e37_79b9_7f4a_7c15) | 1);
    let mut cases = Vec::new();
    for k in 0..count {
        let ty = types[k % types.len()];
        let body = random_loop(&mut rng, ty);
        let text = format!(
            "fn case_{k}(a: *mut {ty}, b: *mut {ty}, out: *mut {ty}, n: i32) {{\n{body}\n}}"
        );
        let f = augur::ir::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        cases.push((ty, f));
    }
    let refs: Vec<&Function> = cases.iter().map(|c| &c.1).collect();
    // Random bodies leave locals unused, which gcc warns of.
    let mut opts = CompileOptions::default();
    opts.flags.retain(|f| f != "-Werror");
    let lib = compile(&augur::codegen::write_module(&refs), &opts).unwrap();
    let code = jit::compile_module(&refs, &CompileOptions::default()).unwrap();
    let mut vectorized = 0;
    for (k, (ty, f)) in cases.iter().enumerate() {
        let alone = jit::compile_function(f, &CompileOptions::default()).unwrap();
        vectorized += alone.vectorized_loops();
        let name = format!("case_{k}");
        // SAFETY: every case is `void case(T *, T *, T *, int32_t)`.
        let (c_fn, jit_fn): (CaseFn, CaseFn) =
            unsafe { (lib.symbol(&name).unwrap(), code.symbol(&name).unwrap()) };
        for layout in LAYOUTS {
            for n in [0, 1, 3, 4, 5, 7, 8, 9, 13] {
                compare(ty, f, layout, n, c_fn, jit_fn);
            }
        }
    }
    eprintln!("{vectorized} of {count} loops vectorized");
    // Most loops must take the vector path, or this tests the scalar one.
    assert!(
        vectorized * 2 >= count,
        "{vectorized} of {count} loops vectorized"
    );
}

/// Runs `f` on a fresh region in the interpreter, as C and as JIT code;
/// all three must leave the same bytes.
#[augur::staged]
fn compare(ty: &str, f: &Function, layout: [usize; 3], n: i32, c_fn: CaseFn, jit_fn: CaseFn) {
    let esize = size(ty);
    let start = region(ty);
    let mut it = Interpreter::new();
    let base = it.memory_mut().alloc_slice(&start);
    let at = |k: usize| Value::Ptr(base.as_ptr().unwrap() + (k * esize) as u64);
    let args = [at(layout[0]), at(layout[1]), at(layout[2]), Value::I32(n)];
    it.call(f, &args).unwrap_or_else(|e| panic!("{e}\n{f}"));
    let interpreted = it.memory().read_slice::<u64>(base, start.len()).unwrap();
    let run = |g: CaseFn| {
        let mut m = start.clone();
        let p = m.as_mut_ptr().cast::<u8>();
        // SAFETY: the region holds every element a case touches for
        // n <= 13 from each layout's offsets.
        unsafe {
            let at = |k: usize| p.add(k * esize);
            g(at(layout[0]), at(layout[1]), at(layout[2]), n);
        }
        m
    };
    let what = format!("layout {layout:?}, n {n}:\n{f}");
    let interpreted = quiet(ty, interpreted);
    assert!(quiet(ty, run(c_fn)) == interpreted, "C differs: {what}");
    assert!(quiet(ty, run(jit_fn)) == interpreted, "JIT differs: {what}");
}

/// The region with every NaN of a float type made one NaN: C leaves a
/// NaN's sign and payload open (gcc and Cranelift may swap the operands
/// of `+` and `*`, and a NaN operand's bits then win over another's).
#[augur::staged]
fn quiet(ty: &str, words: Vec<u64>) -> Vec<u64> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut out = Vec::with_capacity(bytes.len());
    for x in bytes.chunks(size(ty)) {
        match ty {
            "f32" => {
                let v = f32::from_le_bytes(x.try_into().expect("4 bytes"));
                out.extend(if v.is_nan() { f32::NAN } else { v }.to_le_bytes());
            }
            "f64" => {
                let v = f64::from_le_bytes(x.try_into().expect("8 bytes"));
                out.extend(if v.is_nan() { f64::NAN } else { v }.to_le_bytes());
            }
            _ => out.extend(x),
        }
    }
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8 bytes"));
    out.chunks(8).map(word).collect()
}

struct Rng(u64);

impl Rng {
    #[augur::staged]
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random loop over `ty` (see the test). Most are of the shape the JIT
/// vectorizes (stores through one pointer at one index, no loads under a
/// `?:` or `&&`); one in four is drawn without those rules.
#[augur::staged]
fn random_loop(rng: &mut Rng, ty: &str) -> String {
    let wild = rng.below(4) == 0;
    let to = ["out", "out", "a"][rng.below(3)];
    let at = rng.below(3);
    let mut g = Gen {
        rng,
        ty,
        wild,
        to,
        at,
        locals: Vec::new(),
        masks: Vec::new(),
    };
    let mut body = String::new();
    for s in 0..1 + g.rng.below(4) {
        if g.rng.below(3) == 0 {
            let m = g.mask(2, false);
            body += &format!("let m{s}: bool = {m};\n");
            g.masks.push(format!("m{s}"));
        } else {
            let e = g.expr(3, false);
            body += &format!("var v{s}: {ty} = {e};\n");
            g.locals.push(format!("v{s}"));
        }
        if g.rng.below(4) == 0 && !g.locals.is_empty() {
            let v = g.locals[g.rng.below(g.locals.len())].clone();
            let e = g.expr(2, false);
            body += &format!("{v} = {e};\n");
        }
    }
    for _ in 0..1 + g.rng.below(2) {
        let (to, at) = if g.wild {
            (["out", "a"][g.rng.below(2)], g.rng.below(3))
        } else {
            (g.to, g.at)
        };
        let e = g.expr(3, false);
        body += &format!("{to}[i + {at}] = {e};\n");
    }
    let bound = ["n", "n - 1"][g.rng.below(2)];
    format!("var c0: {ty} = b[0];\nfor (var i: i32 = 0; i < {bound}; i = i + 1) {{\n{body}}}")
}

struct Gen<'r> {
    rng: &'r mut Rng,
    ty: &'r str,
    /// Loads anywhere, from any pointer at any index.
    wild: bool,
    /// The pointer stored to, and the index's offset.
    to: &'r str,
    at: usize,
    locals: Vec<String>,
    masks: Vec<String>,
}

impl Gen<'_> {
    /// An expression; without loads when `pure` (unless wild).
    #[augur::staged]
    fn expr(&mut self, depth: usize, pure: bool) -> String {
        let ty = self.ty;
        let float = ty.starts_with('f');
        let leaf = depth == 0 || self.rng.below(3) == 0;
        if leaf {
            return match self.rng.below(5) {
                0 | 1 if !pure || self.wild => self.load(),
                2 if !self.locals.is_empty() => {
                    self.locals[self.rng.below(self.locals.len())].clone()
                }
                3 => "c0".into(),
                _ if float => format!("{}.5{ty}", self.rng.below(4)),
                _ => format!("{}{ty}", self.rng.below(7)),
            };
        }
        let ops: &[&str] = if float {
            &["+", "-", "*"]
        } else {
            &["+", "-", "*", "&", "|", "^"]
        };
        match self.rng.below(6) {
            0 => format!("-({})", self.expr(depth - 1, pure)),
            1 if !float => format!("~({})", self.expr(depth - 1, pure)),
            2 => {
                let m = self.mask(depth - 1, pure);
                let (x, y) = (self.expr(depth - 1, true), self.expr(depth - 1, true));
                format!("({m} ? {x} : {y})")
            }
            _ => {
                let op = ops[self.rng.below(ops.len())];
                let (x, y) = (self.expr(depth - 1, pure), self.expr(depth - 1, pure));
                format!("({x} {op} {y})")
            }
        }
    }

    /// A load: from `b` anywhere, from the other pointer anywhere, from
    /// the one stored to at the stored index (anything when wild).
    #[augur::staged]
    fn load(&mut self) -> String {
        let p = ["a", "b", "out"][self.rng.below(3)];
        let at = if p == self.to && !self.wild {
            self.at
        } else {
            self.rng.below(3)
        };
        format!("{p}[i + {at}]")
    }

    #[augur::staged]
    fn mask(&mut self, depth: usize, pure: bool) -> String {
        if !self.masks.is_empty() && self.rng.below(3) == 0 {
            return self.masks[self.rng.below(self.masks.len())].clone();
        }
        if depth > 0 && self.rng.below(4) == 0 {
            let op = ["&&", "||"][self.rng.below(2)];
            let (x, y) = (self.mask(depth - 1, true), self.mask(depth - 1, true));
            return format!("({x} {op} {y})");
        }
        if depth > 0 && self.rng.below(6) == 0 {
            return format!("!({})", self.mask(depth - 1, pure));
        }
        let op = ["<", "<=", ">", ">=", "==", "!="][self.rng.below(6)];
        let (x, y) = (self.expr(1, pure), self.expr(1, pure));
        format!("({x} {op} {y})")
    }
}
