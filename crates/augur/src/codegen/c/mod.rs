//! The C99 backend: one translation unit per function or module.
//!
//! The output needs only a C99 compiler and the standard headers, and
//! compiles cleanly with `-std=c99 -Wall -Werror` as long as the IR itself is
//! clean (no unused variables, no self-comparisons): see
//! [`exec::compile`](mod@crate::exec::compile) for building and loading it.

/// Looks up `name` in a library as `F` (for the tests of this module and `writer`).
#[cfg(test)]
macro_rules! sym {
    ($lib:expr, $name:literal as $ty:ty) => {{
        // SAFETY: the tests give each function its C signature.
        let f: $ty = unsafe { $lib.symbol($name) }.unwrap();
        f
    }};
}

pub(crate) mod atomics;
pub mod build;
pub mod keywords;
pub(crate) mod print;
pub(crate) mod search;
pub(crate) mod writer;

pub use keywords::RESERVED;
pub use writer::{write_function, write_function_with, write_module, write_module_with};

/// Hand-built IR for the backend's tests.
#[cfg(test)]
pub(crate) mod testkit {
    use crate::exec::compile::test_support::TestDir;
    use crate::exec::compile::{compile, CompileOptions, Library};
    use crate::ir::{
        BinOp, Const, Expr, ExprId, ExternDecl, FuncId, Function, Scalar, Stmt, StmtKind, Type,
        VarData, VarId, VarKind,
    };

    pub const BOOL: Type = Type::Scalar(Scalar::Bool);
    pub const I32: Type = Type::Scalar(Scalar::I32);
    pub const I64: Type = Type::Scalar(Scalar::I64);
    pub const U32: Type = Type::Scalar(Scalar::U32);
    pub const U64: Type = Type::Scalar(Scalar::U64);
    pub const F32: Type = Type::Scalar(Scalar::F32);
    pub const F64: Type = Type::Scalar(Scalar::F64);

    /// A `*const T`.
    pub fn cptr(to: Type) -> Type {
        Type::cptr(to)
    }

    /// The C string type.
    pub fn cstr() -> Type {
        cptr(Type::Scalar(Scalar::Char))
    }

    /// Builds a [`Function`]; every variable gets the name it is given.
    pub struct B {
        pub f: Function,
    }

    impl B {
        pub fn new(name: &str, ret: Type) -> B {
            B {
                f: Function::new(name, ret),
            }
        }

        fn var_data(name: &str, ty: Type, kind: VarKind) -> VarData {
            VarData {
                ty,
                kind,
                hint: None,
                name: Some(name.to_string()),
                addr_taken: false,
                loc: None,
            }
        }

        pub fn param(&mut self, name: &str, ty: Type) -> VarId {
            let n = self.f.params.len() as u32;
            let v = self
                .f
                .vars
                .push(Self::var_data(name, ty, VarKind::Param(n)));
            self.f.params.push(v);
            v
        }

        pub fn local(&mut self, name: &str, ty: Type) -> VarId {
            self.f.vars.push(Self::var_data(name, ty, VarKind::Local))
        }

        pub fn var(&mut self, v: VarId) -> ExprId {
            let ty = self.f.vars[v].ty;
            self.f.expr(Expr::Var(v), ty)
        }

        pub fn k(&mut self, c: Const, ty: Type) -> ExprId {
            self.f.expr(Expr::Const(c), ty)
        }

        pub fn int(&mut self, x: i64, ty: Type) -> ExprId {
            self.k(Const::Int(x), ty)
        }

        pub fn str(&mut self, s: &str) -> ExprId {
            self.k(Const::Str(s.to_string()), cstr())
        }

        pub fn bin(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
            let ty = if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                BOOL
            } else {
                *self.f.ty(a)
            };
            self.f.expr(Expr::Binary(op, a, b), ty)
        }

        pub fn index(&mut self, base: ExprId, i: ExprId) -> ExprId {
            let ty = *self.f.ty(base).element().expect("indexable");
            self.f.expr(Expr::Index(base, i), ty)
        }

        pub fn addr(&mut self, place: ExprId) -> ExprId {
            if let Expr::Var(v) = self.f.exprs[place].kind {
                self.f.vars[v].addr_taken = true;
            }
            let ty = Type::ptr(*self.f.ty(place));
            self.f.expr(Expr::AddrOf(place), ty)
        }

        pub fn call(&mut self, func: FuncId, args: Vec<ExprId>) -> ExprId {
            let ty = self.f.externs[func].ret;
            self.f.expr(Expr::Call(func, args), ty)
        }

        pub fn select(&mut self, c: ExprId, a: ExprId, b: ExprId) -> ExprId {
            let ty = *self.f.ty(a);
            self.f.expr(Expr::Select(c, a, b), ty)
        }

        pub fn ext(
            &mut self,
            name: &str,
            params: Vec<Type>,
            ret: Type,
            header: Option<&str>,
        ) -> FuncId {
            self.f.externs.push(ExternDecl {
                name: name.to_string(),
                params,
                ret,
                variadic: false,
                header: header.map(str::to_string),
                indirect: false,
            })
        }

        pub fn push(&mut self, s: Stmt) {
            self.f.body.push(s);
        }
    }

    pub fn st(kind: StmtKind) -> Stmt {
        Stmt::new(kind)
    }

    pub fn decl(var: VarId, init: Option<ExprId>) -> Stmt {
        st(StmtKind::Decl { var, init })
    }

    pub fn assign(place: ExprId, value: ExprId) -> Stmt {
        st(StmtKind::Assign { place, value })
    }

    pub fn ret(e: Option<ExprId>) -> Stmt {
        st(StmtKind::Return(e))
    }

    pub fn if_(cond: ExprId, then_: Vec<Stmt>, else_: Vec<Stmt>) -> Stmt {
        st(StmtKind::If { cond, then_, else_ })
    }

    /// Compiles `src` (with `-Wall -Werror`) plus `extra` into a library in a
    /// directory of its own; keep the directory alive while calling.
    pub fn build(test: &str, src: &str, extra: &[&str]) -> (TestDir, Library) {
        let dir = TestDir::new(test);
        let opts = CompileOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            extra_c: extra.iter().map(|s| s.to_string()).collect(),
            ..CompileOptions::default()
        };
        match compile(src, &opts) {
            Ok(lib) => (dir, lib),
            Err(e) => panic!("{e}\n--- source ---\n{src}"),
        }
    }
}

/// Generated C compiled with `-Wall -Werror` and run, where the case
/// needs C defined beside it or a module (the rest are file tests:
/// `crates/augur/filetests/c/`).
#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::{write_function, write_module};
    use crate::ir::{BinOp, Scalar, StmtKind, Type};

    #[test]
    fn calls_prototype_and_header_externs() {
        let mut b = B::new("describe", I32);
        let buf = b.param("buf", Type::ptr(Type::Scalar(Scalar::Char)));
        let x = b.param("x", I32);
        let my_add = b.ext("my_add", vec![I32, I32], I32, None);
        let snprintf = b.ext(
            "snprintf",
            vec![Type::ptr(Type::Scalar(Scalar::Char)), U64, cstr()],
            I32,
            Some("stdio.h"),
        );
        b.f.externs[snprintf].variadic = true;
        let printf = b.ext("printf", vec![cstr()], I32, Some("stdio.h"));
        b.f.externs[printf].variadic = true;
        // Declared but never called: its prototype must not warn.
        b.ext("never_called", vec![], F64, None);
        let (k, sum) = (b.local("k", I32), b.local("sum", I32));
        let (fmt, empty) = (b.str("%s"), b.str(""));
        let quiet = b.call(printf, vec![fmt, empty]);
        b.push(decl(k, Some(quiet)));
        let (ex, ek) = (b.var(x), b.var(k));
        let added = b.call(my_add, vec![ex, ek]);
        b.push(decl(sum, Some(added)));
        let (eb, cap) = (b.var(buf), b.int(64, U64));
        let text = b.str("\"q\"\t\\ é??!\n%d");
        let esum = b.var(sum);
        let written = b.call(snprintf, vec![eb, cap, text, esum]);
        b.push(ret(Some(written)));
        let src = write_function(&b.f);
        assert!(src.contains("#include <stdio.h>\n"), "{src}");
        assert!(
            src.contains("\nint32_t my_add(int32_t, int32_t);\ndouble never_called(void);\n"),
            "{src}"
        );
        let extra = "#include <stdint.h>\nint32_t my_add(int32_t a, int32_t b) { return a + b; }\n";
        let (_dir, lib) = build("c-externs", &src, &[extra]);
        let describe = sym!(lib, "describe" as extern "C" fn(*mut u8, i32) -> i32);
        let mut out = [0u8; 64];
        let len = describe(out.as_mut_ptr(), 40);
        let expected = "\"q\"\t\\ é??!\n40";
        assert_eq!(len as usize, expected.len());
        assert_eq!(&out[..expected.len()], expected.as_bytes());
    }

    #[test]
    fn variadic_prototype() {
        let mut b = B::new("sum3", I32);
        let f = b.ext("va_total", vec![I32], I32, None);
        b.f.externs[f].variadic = true;
        let args = [3, 10, 20, 30].map(|v| b.int(v, I32)).to_vec();
        let call = b.call(f, args);
        b.push(ret(Some(call)));
        let src = write_function(&b.f);
        assert!(src.contains("\nint32_t va_total(int32_t, ...);\n"), "{src}");
        let extra = "#include <stdarg.h>\n#include <stdint.h>\n\
            int32_t va_total(int32_t n, ...) { va_list ap; int32_t s = 0; va_start(ap, n);\n\
            while (n-- > 0) { s += va_arg(ap, int32_t); } va_end(ap); return s; }\n";
        let (_dir, lib) = build("c-variadic", &src, &[extra]);
        assert_eq!(sym!(lib, "sum3" as extern "C" fn() -> i32)(), 60);
    }

    #[test]
    fn goto_fallback_unsized_array_and_pointer_return() {
        let mut b = B::new("count", I32);
        let n = b.param("n", I32);
        let i = b.local("i", I32);
        let label = crate::ir::LabelId(0);
        let zero = b.int(0, I32);
        b.push(decl(i, Some(zero)));
        b.push(st(StmtKind::Label(label)));
        let (i1, i2, one) = (b.var(i), b.var(i), b.int(1, I32));
        let next = b.bin(BinOp::Add, i2, one);
        b.push(assign(i1, next));
        let (ei, en) = (b.var(i), b.var(n));
        let more = b.bin(BinOp::Lt, ei, en);
        b.push(if_(more, vec![st(StmtKind::Goto(label))], vec![]));
        let ei = b.var(i);
        b.push(ret(Some(ei)));
        let count = b.f;

        let mut b = B::new("second", Type::ptr(F32));
        let unsized_ = Type::array(F32, None);
        let a = b.param("a", unsized_);
        let (ea, one) = (b.var(a), b.int(1, I32));
        let elem = b.index(ea, one);
        let addr = b.addr(elem);
        b.push(ret(Some(addr)));
        let second = b.f;

        let nothing = B::new("nothing", Type::Void).f;
        let src = write_module(&[&count, &second, &nothing]);
        assert!(src.contains("float *second(float a[]) {\n"), "{src}");
        assert!(src.contains("void nothing(void) {\n}\n"), "{src}");
        let (_dir, lib) = build("c-goto", &src, &[]);
        assert_eq!(sym!(lib, "count" as extern "C" fn(i32) -> i32)(5), 5);
        let data = [1.0f32, 2.0, 3.0];
        let p = sym!(lib, "second" as extern "C" fn(*const f32) -> *const f32)(data.as_ptr());
        assert_eq!(p, data[1..].as_ptr());
        sym!(lib, "nothing" as extern "C" fn())();
    }
}
