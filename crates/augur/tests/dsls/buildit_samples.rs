//! BuildIt's samples that need more than one function, function pointers
//! or qualifiers, rewritten with augur and checked: the C they give, and
//! what it does compiled (as a library, and as a program whose output is
//! compared with BuildIt's recorded output) and interpreted.
//!
//! * sample 15: a function pointer `void (*)(int, int *)` called;
//! * sample 41: `print_a` … `print_z`, each printing its letter `count`
//!   times and calling the next with `count + 1`: functions generated on
//!   demand, keyed by a first-stage `char`;
//! * sample 65: `restrict` pointer parameters;
//! * samples 42 and 52: struct members through values, pointers and nested
//!   structs.

use augur::exec::{Backend, CompileOptions};
use augur::{libc, AnyArg, Builder, Dyn, FnPtr, Func, Interpreter, Value};
use std::sync::Mutex;

/// Compiles `c` with `main_body` as `main` into a program, runs it and
/// gives its standard output.
#[augur::staged]
fn run_program(name: &str, c: &str, main_body: &str) -> String {
    let dir = std::env::temp_dir().join(format!("augur-sample-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("main.c");
    std::fs::write(
        &src,
        format!("{c}\nint main(void) {{\n{main_body}\n  return 0;\n}}\n"),
    )
    .unwrap();
    let exe = dir.join("main");
    let cc = CompileOptions::default().resolved_cc();
    let out = std::process::Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{c}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(run.stdout).unwrap()
}

// ----- sample 15 -----

type Bar = FnPtr<fn(i32, *mut i32)>;

static CALLS: Mutex<Vec<(i32, i32)>> = Mutex::new(Vec::new());

extern "C" fn record(a: i32, b: *mut i32) {
    // SAFETY: the test passes a pointer to a live `i32`.
    CALLS.lock().unwrap().push((a, unsafe { *b }));
}

#[test]
#[augur::staged]
fn sample15_calls_through_a_function_pointer() {
    let ex = Builder::new()
        .extract("foo", |bar: Dyn<Bar>, a: Dyn<i32>, b: Dyn<*mut i32>| {
            bar.call(a, b)
        })
        .unwrap();
    let c = ex.c_code();
    assert!(
        c.contains("void foo(void (*arg0)(int32_t, int32_t *), int32_t arg1, int32_t *arg2) {"),
        "{c}"
    );
    assert!(c.contains("  arg0(arg1, arg2);\n"), "{c}");
    for backend in [Backend::C, Backend::Jit] {
        let f = ex
            .compile_with(&CompileOptions::default().with_backend(backend))
            .unwrap();
        let mut x = 41;
        // SAFETY: `foo` calls `record` with 7 and a pointer to `x`.
        unsafe { f.get()(record, 7, &mut x) };
    }
    assert_eq!(*CALLS.lock().unwrap(), [(7, 41), (7, 41)]);
    let mut it = Interpreter::new();
    it.register("record", |m, a| {
        let b = m.load(a[1], &augur::ir::Type::Scalar(augur::ir::Scalar::I32))?;
        m.store(
            a[1],
            Value::I32(b.as_i64().unwrap() as i32 + a[0].as_i64().unwrap() as i32),
        )?;
        Ok(Value::Void)
    });
    let f = it.memory_mut().function_ptr("record");
    let x = it.memory_mut().alloc_slice(&[41i32]);
    ex.interpret_in(&mut it, &[f, 7.into(), x]).unwrap();
    assert_eq!(it.memory().read_slice::<i32>(x, 1).unwrap(), [48]);
}

// ----- sample 41 -----

/// `print_c(count)` for every letter `c`.
type Print = Func<fn(i32), u8>;

#[augur::staged]
fn letters_module() -> (augur::Module<'static>, Print) {
    let mut m = Builder::new().module();
    let print = m.declare_keyed::<u8, fn(i32)>("print");
    m.define_keyed(print, move |c: u8, count: Dyn<i32>| {
        let i = Dyn::new(0);
        while i.lt(count).is_true() {
            let args: [AnyArg; 2] = [Dyn::str("%c").into(), i32::from(c).into()];
            libc::PRINTF.call_with(&args);
            i.set(i + 1);
        }
        libc::PRINTF.call_with(&[Dyn::str("\n").into()]);
        if c < b'z' {
            print.at(c + 1).call(count + 1);
        }
    });
    m.export(print.at(b'a'));
    (m, print)
}

#[test]
#[augur::staged]
fn sample41_generates_a_function_per_letter_on_demand() {
    let (m, print) = letters_module();
    let ex = m.extract().unwrap();
    let names: Vec<&str> = ex.functions().map(|f| f.name.as_str()).collect();
    let want: Vec<String> = (b'a'..=b'z').map(|c| format!("print_{c}")).collect();
    assert_eq!(names, want);
    let expected: String = (1..=26)
        .map(|n| {
            format!(
                "{}\n",
                ((b'a' + n - 1) as char).to_string().repeat(n.into())
            )
        })
        .collect();
    // BuildIt's recorded output, line by line.
    assert!(
        expected.starts_with("a\nbb\nccc\n")
            && expected.ends_with(&format!("{}\n", "z".repeat(26)))
    );
    let mut it = Interpreter::new();
    ex.interpret_in(&mut it, print.at(b'a'), &[1.into()])
        .unwrap();
    assert_eq!(it.output(), expected);
    let printed = run_program("41", &ex.c_code(), "  print_97(1);");
    assert_eq!(printed, expected);
}

// ----- sample 65 -----

#[test]
#[augur::staged]
fn sample65_declares_pointer_parameters_restrict() {
    let ex = Builder::new()
        .restrict([0, 1])
        .extract(
            "bar",
            |x: Dyn<*mut i32>, y: Dyn<*mut i32>, size: Dyn<i32>| {
                let i = Dyn::new(0);
                while i.lt(size).is_true() {
                    x.at(i).set(y.at(i));
                    i.set(i + 1);
                }
            },
        )
        .unwrap();
    let c = ex.c_code();
    assert!(
        c.contains("void bar(int32_t *restrict arg0, int32_t *restrict arg1, int32_t arg2) {"),
        "{c}"
    );
    let ys = [3, 1, 4, 1, 5];
    for backend in [Backend::C, Backend::Jit] {
        let f = ex
            .compile_with(&CompileOptions::default().with_backend(backend))
            .unwrap();
        let (mut xs, mut ys) = ([0; 5], ys);
        // SAFETY: `bar` copies 5 ints between two distinct arrays.
        unsafe { f.get()(xs.as_mut_ptr(), ys.as_mut_ptr(), 5) };
        assert_eq!(xs, ys);
    }
    let mut it = Interpreter::new();
    let x = it.memory_mut().alloc_slice(&[0i32; 5]);
    let y = it.memory_mut().alloc_slice(&ys);
    ex.interpret_in(&mut it, &[x, y, 5.into()]).unwrap();
    assert_eq!(it.memory().read_slice::<i32>(x, 5).unwrap(), ys);
}

// ----- samples 42 and 52: structs -----

#[derive(Clone, Copy, Debug, PartialEq, augur::Staged)]
#[repr(C)]
struct FooT {
    member: i32,
}

/// BuildIt's `BarT<int>` (a generic `custom_type`): here one concrete struct.
#[derive(Clone, Copy, Debug, PartialEq, augur::Staged)]
#[repr(C)]
struct BarT {
    my_member: i32,
    second_member: i32,
}

#[test]
#[augur::staged]
fn sample42_struct_members_through_values_and_pointers() {
    let ex = Builder::new()
        .extract("my_bar", |i: Dyn<*mut FooT>, init: Dyn<i32>| {
            let g = Dyn::<FooT>::uninit();
            g.member().set(init);
            // `g = g + 1`: BuildIt's sample defines `+` on FooT as adding to
            // the member.
            g.member().set(g.member() + 1);
            let x = Dyn::new(g.member());
            let h = Dyn::new(g);
            h.set(g);
            let f = Dyn::<BarT>::uninit();
            f.second_member().set(g.member() + 1);
            f.my_member().set(x);
            i.deref().member().set(f.second_member());
            i.at(3).member().set(0);
            x + h.member() + f.second_member() + f.my_member()
        })
        .unwrap();
    let c = ex.c_code();
    assert!(
        c.contains("typedef struct FooT {\n  int32_t member;\n} FooT;"),
        "{c}"
    );
    assert!(
        c.contains(
            "typedef struct BarT {\n  int32_t my_member;\n  int32_t second_member;\n} BarT;"
        ),
        "{c}"
    );
    assert!(
        c.contains("arg0->member = ") && c.contains("arg0[3].member = 0;"),
        "{c}"
    );
    // g = 6, x = 6, h = g, f = (6, 7): 6 + 6 + 7 + 6.
    for backend in [Backend::C, Backend::Jit] {
        let f = ex
            .compile_with(&CompileOptions::default().with_backend(backend))
            .unwrap();
        let mut is = [FooT { member: 9 }; 4];
        // SAFETY: `my_bar` writes `member` of elements 0 and 3 at `i`.
        assert_eq!(unsafe { f.get()(is.as_mut_ptr(), 5) }, 25);
        assert_eq!(
            is,
            [
                FooT { member: 7 },
                FooT { member: 9 },
                FooT { member: 9 },
                FooT { member: 0 }
            ]
        );
    }
    let mut it = Interpreter::new();
    let is = it.memory_mut().alloc_slice(&[9i32; 4]);
    assert_eq!(
        ex.interpret_in(&mut it, &[is, 5.into()]).unwrap(),
        25.into()
    );
    assert_eq!(it.memory().read_slice::<i32>(is, 4).unwrap(), [7, 9, 9, 0]);
}

#[derive(Clone, Copy, Debug, PartialEq, augur::Staged)]
#[repr(C)]
struct StructType {
    x: i32,
    y: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, augur::Staged)]
#[repr(C)]
struct MyType {
    nested: StructType,
    another: i32,
}

#[test]
#[augur::staged]
fn sample52_nested_struct_members_keep_their_names() {
    let ex = Builder::new()
        .extract("bar", |p: Dyn<*mut StructType>, another: Dyn<i32>| {
            let a = Dyn::<MyType>::uninit();
            a.another().set(another);
            let b = Dyn::<StructType>::uninit();
            b.x().set(1);
            b.y().set(2.5f32);
            a.nested().set(b);
            a.nested().x().set(a.another());
            let mut y = a.nested().y();
            y += 1.0f32;
            p.deref().x().set(0);
            a.nested().y() + a.nested().x().cast::<f32>()
        })
        .unwrap();
    let c = ex.c_code();
    // BuildIt prints `var0.nested.mem0 = var0.mem0;` here: the members'
    // names are lost. augur keeps them.
    assert!(c.contains(".nested.x = ") && c.contains(".another;"), "{c}");
    assert!(c.contains("arg0->x = 0;"), "{c}");
    for backend in [Backend::C, Backend::Jit] {
        let f = ex
            .compile_with(&CompileOptions::default().with_backend(backend))
            .unwrap();
        let mut p = StructType { x: 5, y: 1.0 };
        // SAFETY: `bar` writes `x` of the struct at `p`.
        assert_eq!(unsafe { f.get()(&mut p, 4) }, 7.5);
        assert_eq!(p, StructType { x: 0, y: 1.0 });
    }
    let mut it = Interpreter::new();
    let p = it.memory_mut().alloc_slice(&[5i32, 0]);
    assert_eq!(
        ex.interpret_in(&mut it, &[p, 4.into()]).unwrap(),
        7.5f32.into()
    );
}
