//! Writes C99 translation units from IR functions.
//!
//! Expressions and statements print through the IR's shared printers
//! (`ir::display`); this module adds what only C needs: includes, extern
//! prototypes and function headers. Output depends only on the input (no hash
//! map order), so equal IR gives byte-identical C and equal cache keys.

use super::print::{c_declarator, BlockPrinter, ExprPrinter};
use crate::codegen::source_map::{write_file_macro, CodegenOptions, Marker};
use crate::ir::device::intrinsics;
use crate::ir::Intrinsic;
use crate::ir::{Const, Expr, ExternDecl, Function, OpaqueType, Type, VarId};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Headers every translation unit includes: fixed-width integers, `bool`, `NULL`.
const PREAMBLE: [&str; 3] = ["stdint.h", "stdbool.h", "stddef.h"];

/// A complete C translation unit defining `f`.
pub fn write_function(f: &Function) -> String {
    write_module(&[f])
}

/// [`write_function`] with options (source mapping).
///
/// ```
/// #[augur::staged]
/// fn main() -> augur::Result<()> {
///     use augur::codegen::{write_function, write_function_with, CodegenOptions, LineMarkers};
///     use augur::{Builder, Dyn};
///
///     let ex = Builder::new().extract("neg", |x: Dyn<i32>| -x).unwrap();
///     let plain = write_function(ex.ir());
///     assert_eq!(write_function_with(ex.ir(), &CodegenOptions::default()), plain);
///     let opts = CodegenOptions::default().with_line_markers(LineMarkers::Directives);
///     assert!(write_function_with(ex.ir(), &opts).contains("#line "));
///     Ok(())
/// }
/// ```
pub fn write_function_with(f: &Function, opts: &CodegenOptions) -> String {
    write_module_with(&[f], opts)
}

/// A complete C translation unit defining each of `fs`, in the given order.
///
/// Includes and prototypes are shared: an extern that several functions call
/// is declared once, before all functions, so the functions may also call
/// each other through prototype externs.
pub fn write_module(fs: &[&Function]) -> String {
    write_module_with(fs, &CodegenOptions::default())
}

/// [`write_module`] with options (source mapping).
pub fn write_module_with(fs: &[&Function], opts: &CodegenOptions) -> String {
    let mut out = super::build::needs(fs).c_header();
    write_includes(&mut out, fs);
    write_file_macro(&mut out, opts);
    write_checked_helper(&mut out, fs);
    super::atomics::write_helpers(&mut out, fs);
    super::search::write_helper(&mut out, fs);
    write_struct_tags(&mut out, fs);
    write_structs(&mut out, fs);
    write_prototypes(&mut out, fs);
    for f in fs {
        out.push('\n');
        write_definition(&mut out, f, opts, "restrict");
    }
    out
}

/// The `#include` line for a header given as `stdio.h`, `<stdio.h>` or `"my.h"`.
pub(crate) fn include_line(header: &str) -> String {
    if header.starts_with(['<', '"']) {
        format!("#include {header}")
    } else {
        format!("#include <{header}>")
    }
}

fn write_includes(out: &mut String, fs: &[&Function]) {
    let mut lines: Vec<String> = PREAMBLE.iter().map(|h| include_line(h)).collect();
    // `NAN` and `INFINITY` are macros of <math.h>.
    if fs.iter().any(|f| has_special_float(f)) {
        lines.push(include_line("math.h"));
    }
    // Sorted by the line, so `stdio.h` and `<stdio.h>` meet and dedupe.
    let headers: BTreeSet<String> = fs
        .iter()
        .flat_map(|f| f.externs.iter())
        .filter_map(|(_, d)| d.header.as_deref())
        .chain(
            fs.iter()
                .flat_map(|f| opaque_types(f))
                .filter_map(|o| o.header.as_deref()),
        )
        // The bounds check's definition needs these.
        .chain(match uses_checked(fs) {
            true => vec!["stdio.h", "stdlib.h"],
            false => vec![],
        })
        .map(include_line)
        .collect();
    for h in headers {
        if !lines.contains(&h) {
            lines.push(h);
        }
    }
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
}

/// True if some function of `fs` has a bounds check of checked functions.
fn uses_checked(fs: &[&Function]) -> bool {
    fs.iter()
        .flat_map(|f| intrinsics(f))
        .any(|(i, _)| i == Intrinsic::Checked)
}

/// The bounds check of checked functions (`passes::bounds`), when a
/// function calls it.
pub(crate) fn write_checked_helper(out: &mut String, fs: &[&Function]) {
    if !uses_checked(fs) {
        return;
    }
    let _ = write!(
        out,
        "\nstatic int64_t augur_checked(int64_t i, int64_t len, int32_t slice) {{\n  \
         if (i < 0 || i >= len) {{\n    \
         if (slice < 0) fprintf(stderr, \"augur: index %lld is out of bounds of a local array (length %lld)\\n\", (long long)i, (long long)len);\n    \
         else fprintf(stderr, \"augur: index %lld is out of bounds of slice %d (length %lld)\\n\", (long long)i, (int)slice, (long long)len);\n    \
         abort();\n  }}\n  return i;\n}}\n"
    );
}

/// The opaque types `f` mentions: in its variables, expressions and
/// externs' signatures, at any depth (behind pointers, in function
/// pointers), sorted by name.
pub(crate) fn opaque_types(f: &Function) -> BTreeSet<&'static OpaqueType> {
    let mut out = BTreeSet::new();
    let mut add = |t: &Type| {
        t.for_each_part(&mut |t| {
            if let Type::Opaque(o) = t {
                out.insert(*o);
            }
        })
    };
    f.vars.iter().for_each(|(_, v)| add(&v.ty));
    f.exprs.iter().for_each(|(_, e)| add(&e.ty));
    for (_, d) in f.externs.iter() {
        d.params.iter().for_each(&mut add);
        add(&d.ret);
    }
    add(&f.ret);
    out
}

/// `typedef struct S { T field; ... } S;` for each struct `fs` use, in
/// dependency order.
pub(crate) fn write_structs(out: &mut String, fs: &[&Function]) {
    for s in crate::ir::struct_types(fs) {
        let _ = writeln!(out, "\ntypedef struct {} {{", s.name);
        for (name, t) in &s.fields {
            let _ = writeln!(out, "  {};", c_declarator(t, name));
        }
        let _ = writeln!(out, "}} {};", s.name);
    }
}

/// `struct tag;` for each opaque `struct` no header declares, so that
/// prototypes and definitions share one type.
pub(crate) fn write_struct_tags(out: &mut String, fs: &[&Function]) {
    let tags: BTreeSet<&str> = fs
        .iter()
        .flat_map(|f| opaque_types(f))
        .filter(|o| o.header.is_none() && o.name.starts_with("struct "))
        .map(|o| o.name.as_str())
        .collect();
    if tags.is_empty() {
        return;
    }
    out.push('\n');
    for t in tags {
        out.push_str(t);
        out.push_str(";\n");
    }
}

/// True if some float constant of `f` is NaN or infinite.
pub(crate) fn has_special_float(f: &Function) -> bool {
    crate::ir::parallel::has_float_extremum(f)
        || f.exprs.iter().any(|(_, d)| match &d.kind {
            Expr::Const(Const::F32(x)) => !x.is_finite(),
            Expr::Const(Const::F64(x)) => !x.is_finite(),
            _ => false,
        })
}

fn write_prototypes(out: &mut String, fs: &[&Function]) {
    // A Vec keeps first-appearance order; the lists are short.
    let mut seen: Vec<&ExternDecl> = Vec::new();
    for f in fs {
        for (_, d) in f.externs.iter() {
            if d.header.is_none() && !d.indirect && !seen.contains(&d) {
                seen.push(d);
            }
        }
    }
    write_prototype_list(out, &seen);
}

/// A blank line, then one prototype per line (nothing when there are none).
pub(crate) fn write_prototype_list(out: &mut String, decls: &[&ExternDecl]) {
    if decls.is_empty() {
        return;
    }
    out.push('\n');
    for d in decls {
        out.push_str(&prototype(d));
        out.push_str(";\n");
    }
}

/// `int32_t my_add(int32_t, int32_t)`, without the `;`.
pub(crate) fn prototype(d: &ExternDecl) -> String {
    let mut params: Vec<String> = d.params.iter().map(|t| c_declarator(t, "")).collect();
    let list = match (params.is_empty(), d.variadic) {
        (true, false) => "void".to_string(),
        // C99 has no `f(...)`; an old-style declaration accepts any arguments.
        (true, true) => String::new(),
        (false, variadic) => {
            if variadic {
                params.push("...".to_string());
            }
            params.join(", ")
        }
    };
    c_declarator(&d.ret, &format!("{}({list})", d.name))
}

/// Parameter `p` of `f` declared, with `keyword` (`restrict`, or CUDA's
/// `__restrict__`) after its `*` when `f` declares it restrict.
pub(crate) fn param_declarator(f: &Function, p: crate::ir::VarId, keyword: &str) -> String {
    let name = f.var_name(p);
    if f.restrict.contains(&p) {
        c_declarator(&f.vars[p].ty, &format!("{keyword} {name}"))
    } else {
        c_declarator(&f.vars[p].ty, &name)
    }
}

/// The definition of `f`; `out` holds the unit from its start (see
/// [`write_body`]). `restrict` is the language's keyword for restrict
/// parameters (C++ has none: CUDA units say `__restrict__`).
pub(crate) fn write_definition(
    out: &mut String,
    f: &Function,
    opts: &CodegenOptions,
    restrict: &str,
) {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|&p| param_declarator(f, p, restrict))
        .collect();
    let list = if params.is_empty() {
        "void".to_string()
    } else {
        params.join(", ")
    };
    // The declarator wraps the name, so pointer returns print as `T *name(...)`.
    let _ = writeln!(
        out,
        "{} {{",
        c_declarator(&f.ret, &format!("{}({list})", f.name))
    );
    write_body(out, f, &f.body, 1, opts);
    out.push_str("}\n");
}

/// Prints the statements `b` of `f` at `depth`, with the markers `opts`
/// asks for. `out` must hold the unit from its first line: `#line`
/// directives that go back to the generated file give its real line numbers.
/// After it the compiler counts lines of the generated file again.
pub(crate) fn write_body(
    out: &mut String,
    f: &Function,
    b: &crate::ir::Block,
    depth: usize,
    opts: &CodegenOptions,
) {
    let name = |v: VarId| f.var_name(v);
    let decl = |v: VarId| c_declarator(&f.vars[v].ty, &f.var_name(v));
    let marker = Marker::new(opts);
    let printer = BlockPrinter {
        exprs: ExprPrinter {
            func: f,
            name: &name,
            narrow_casts: true,
        },
        decl: &decl,
        marks: &marker,
    };
    printer.block(out, b, depth);
    marker.finish(out);
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::{write_function, write_function_with, write_module, write_module_with};
    use crate::codegen::CodegenOptions;
    use crate::ir::{BinOp, Const, Function, Type};

    // Constants, casts and strings are file tests (`crates/augur/filetests/c/`),
    // compiled and run there.

    /// `int32_t clamp(int32_t x, int32_t hi)` with an annotated `if`.
    fn clamp() -> Function {
        let mut b = B::new("clamp", I32);
        let (x, hi) = (b.param("x", I32), b.param("hi", I32));
        let r = b.local("r", I32);
        let ex = b.var(x);
        b.push(decl(r, Some(ex)));
        let (er, ehi) = (b.var(r), b.var(hi));
        let big = b.bin(BinOp::Gt, er, ehi);
        let (er, ehi) = (b.var(r), b.var(hi));
        let mut branch = if_(big, vec![assign(er, ehi)], vec![]);
        branch
            .annotations
            .push(crate::ir::Annotation::Comment("too big".into()));
        b.push(branch);
        let (er, zero) = (b.var(r), b.int(0, I32));
        let neg = b.bin(BinOp::Lt, er, zero);
        let (zero, er) = (b.int(0, I32), b.var(r));
        let e = b.select(neg, zero, er);
        b.push(ret(Some(e)));
        b.f
    }

    /// `src` without the build comment it starts with.
    fn body(src: &str) -> &str {
        let end = src.find(" */\n").expect("a build comment") + 4;
        assert!(src.starts_with("/* C99 generated by augur"), "{src}");
        &src[end..]
    }

    #[test]
    fn snapshot() {
        let expected = "\
/* C99 generated by augur from `clamp`.
 * build:   cc -std=c99 -O2 -fwrapv -c unit.c
 * library: cc -std=c99 -O2 -fwrapv -fPIC -shared -o unit.so unit.c
 * -fwrapv: signed arithmetic wraps, as the IR defines it.
 */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

int32_t clamp(int32_t x, int32_t hi) {
  int32_t r = x;
  if (r > hi) { // too big
    r = hi;
  }
  return r < 0 ? 0 : r;
}
";
        assert_eq!(write_function(&clamp()), expected);
    }

    /// `clamp` with its statements from `src/user.rs` lines 10, 11 and 12,
    /// and the `return` from nowhere.
    fn located_clamp() -> Function {
        let mut f = clamp();
        let at = |line| {
            Some(crate::ir::SrcLoc {
                file: "src/user.rs",
                line,
                col: 5,
            })
        };
        f.body[0].loc = at(10);
        f.body[1].loc = at(11);
        let crate::ir::StmtKind::If { then_, .. } = &mut f.body[1].kind else {
            unreachable!("clamp's second statement is an if")
        };
        then_[0].loc = at(12);
        f
    }

    #[test]
    fn directives_snapshot() {
        let opts = CodegenOptions::default()
            .with_line_markers(crate::codegen::LineMarkers::Directives)
            .with_source_root("/ws");
        let expected = "\
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef AUGUR_GENERATED_FILE
#ifdef __BASE_FILE__
#define AUGUR_GENERATED_FILE __BASE_FILE__
#else
#define AUGUR_GENERATED_FILE \"augur-generated.c\"
#endif
#endif

int32_t clamp(int32_t x, int32_t hi) {
#line 10 \"/ws/src/user.rs\"
  int32_t r = x;
  if (r > hi) { // too big
    r = hi;
#line 24 AUGUR_GENERATED_FILE
  }
  return r < 0 ? 0 : r;
}
";
        assert_eq!(
            body(&write_function_with(&located_clamp(), &opts)),
            expected
        );
        // Without markers, locations change nothing.
        let plain = write_function_with(&located_clamp(), &CodegenOptions::default());
        assert_eq!(plain, write_function(&clamp()));
    }

    /// gcc names the Rust line for a located statement and the generated
    /// file's real line for the engine's statements, in one unit of two
    /// functions (the second function's lines count from the real file).
    #[test]
    fn diagnostics_name_rust_lines_and_generated_lines() {
        use crate::exec::compile::{compile, test_support::TestDir, CompileOptions};
        let equal = |name: &str, line: Option<u32>| {
            let mut b = B::new(name, BOOL);
            let (x, y) = (b.param("x", F64), b.param("y", F64));
            let (ex, ey) = (b.var(x), b.var(y));
            let eq = b.bin(BinOp::Eq, ex, ey);
            let mut s = ret(Some(eq));
            s.loc = line.map(|line| crate::ir::SrcLoc {
                file: "src/user.rs",
                line,
                col: 1,
            });
            b.push(s);
            b.f
        };
        let (located, generated) = (equal("eq_a", Some(7)), equal("eq_b", None));
        let opts =
            CodegenOptions::default().with_line_markers(crate::codegen::LineMarkers::Directives);
        let src = write_module_with(&[&located, &generated], &opts);
        let second = src.rfind("return x == y;").unwrap();
        let real = src[..second].matches('\n').count() + 1;
        let dir = TestDir::new("c-line-diagnostics");
        let mut copts = CompileOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            ..CompileOptions::default()
        };
        copts.flags.push("-Wfloat-equal".into());
        let Err(crate::Error::Compile { output, path }) = compile(&src, &copts) else {
            panic!("-Wfloat-equal -Werror accepted x == y\n{src}")
        };
        assert!(output.contains("src/user.rs:7:"), "{output}\n{src}");
        let at = format!("{}:{real}:", path.display());
        assert!(output.contains(&at), "no {at} in {output}\n{src}");
    }

    /// Comments go on their own lines, so annotations stay where they were.
    #[test]
    fn comments_snapshot() {
        let opts =
            CodegenOptions::default().with_line_markers(crate::codegen::LineMarkers::Comments);
        let src = write_function_with(&located_clamp(), &opts);
        let body = "  // src/user.rs:10\n  int32_t r = x;\n  // src/user.rs:11\n  \
                    if (r > hi) { // too big\n    // src/user.rs:12\n    r = hi;\n  }\n";
        assert!(src.contains(body), "{src}");
    }

    #[test]
    fn output_is_deterministic() {
        let f = clamp();
        assert_eq!(write_function(&f), write_function(&f.clone()));
    }

    /// A function calling `add` (a prototype) and `puts`/`abs` (headers).
    fn caller(name: &str, header: &str) -> Function {
        let mut b = B::new(name, Type::Void);
        b.ext("add", vec![I32, I32], I32, None);
        b.ext("puts", vec![cstr()], I32, Some("stdio.h"));
        b.ext("abs", vec![I32], I32, Some(header));
        b.f
    }

    #[test]
    fn module_shares_includes_and_prototypes() {
        let (f, g) = (caller("f", "stdlib.h"), caller("g", "<stdlib.h>"));
        let src = write_module(&[&f, &g]);
        assert!(src.starts_with("/* C99 generated by augur from `f`, `g`.\n"));
        let expected_head = "\
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int32_t add(int32_t, int32_t);

void f(void) {
}

void g(void) {
}
";
        assert_eq!(body(&src), expected_head);
    }

    #[test]
    fn header_forms_and_sorting() {
        let mut b = B::new("h", Type::Void);
        b.ext("z", vec![], Type::Void, Some("zlib.h"));
        b.ext("q", vec![], Type::Void, Some("\"local.h\""));
        b.ext("i", vec![], Type::Void, Some("stdint.h"));
        b.ext("a", vec![], Type::Void, Some("assert.h"));
        let src = write_function(&b.f);
        let includes: Vec<&str> = body(&src)
            .lines()
            .take_while(|l| l.starts_with('#'))
            .collect();
        let expected = [
            "#include <stdint.h>",
            "#include <stdbool.h>",
            "#include <stddef.h>",
            "#include \"local.h\"",
            "#include <assert.h>",
            "#include <zlib.h>",
        ];
        assert_eq!(includes, expected);
    }

    #[test]
    fn math_h_only_for_nan_and_infinity() {
        let with = |c: Const, ty: Type| {
            let mut b = B::new("k", ty);
            let e = b.k(c, ty);
            b.push(ret(Some(e)));
            write_function(&b.f)
        };
        assert!(!with(Const::F64(1.5), F64).contains("math.h"));
        assert!(!with(Const::F32(-0.0), F32).contains("math.h"));
        assert!(with(Const::F64(f64::NAN), F64).contains("#include <math.h>\n"));
        assert!(with(Const::F32(f32::NEG_INFINITY), F32).contains("return (-INFINITY);"));
    }

    #[test]
    fn prototype_forms() {
        let mut b = B::new("p", Type::Void);
        b.ext("none", vec![], I64, None);
        let v = b.ext("any", vec![], Type::Void, None);
        b.f.externs[v].variadic = true;
        b.ext(
            "ptrs",
            vec![Type::ptr(cptr(U32)), cptr(F64)],
            Type::ptr(BOOL),
            None,
        );
        let src = write_function(&b.f);
        let expected =
            "\nint64_t none(void);\nvoid any();\nbool *ptrs(const uint32_t **, const double *);\n";
        assert!(src.contains(expected), "{src}");
    }
}
