//! Every operator, on every scalar type, with variables and with constants,
//! and every cast between scalar types: the JIT against the C backend and
//! the interpreter, on values at the edges of each type.
//!
//! Each case is a function `case_N(inp: *mut u64, out: *mut u64)` that
//! reads its operands from `inp[0]` and `inp[1]` and writes its result to
//! `out[0]`; the output bytes are compared. Inputs on which the interpreter
//! reports undefined behaviour are skipped.

use super::harness::{run_cases, Case};
use augur::ir::Scalar;

const TYPES: [Scalar; 12] = Scalar::ALL;

/// Interesting values of `s`, as the 8 little-endian bytes of an input word.
#[augur::staged]
fn values(s: Scalar) -> Vec<u64> {
    let ints: [i64; 16] = [
        0,
        1,
        -1,
        2,
        3,
        -7,
        31,
        33,
        63,
        100,
        -128,
        255,
        i32::MIN as i64,
        i32::MAX as i64,
        i64::MIN,
        i64::MAX,
    ];
    let floats: [f64; 14] = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        2.5,
        1e10,
        -3e9,
        0.1,
        1e-310,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        300.75,
        -129.5,
    ];
    match s {
        Scalar::Bool => vec![0, 1],
        Scalar::F64 => floats.iter().map(|f| f.to_bits()).collect(),
        Scalar::F32 => floats
            .iter()
            .map(|&f| u64::from((f as f32).to_bits()))
            .collect(),
        _ => {
            let bits = s.size() * 8;
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let mut v: Vec<u64> = ints.iter().map(|&i| i as u64 & mask).collect();
            v.dedup();
            v
        }
    }
}

#[augur::staged]
fn name(s: Scalar) -> &'static str {
    s.rust_name()
}

/// A literal of type `s` for the constant-operand cases.
#[augur::staged]
fn literal(s: Scalar, k: i64) -> String {
    match s {
        Scalar::Bool => (k != 0).to_string(),
        Scalar::F32 => format!("{k}.5f32"),
        Scalar::F64 => format!("{k}.25"),
        _ if k < 0 && !s.is_signed() => format!("{}{}", k.unsigned_abs(), name(s)),
        _ => format!("{k}{}", name(s)),
    }
}

#[augur::staged]
fn binary_ops(s: Scalar) -> Vec<&'static str> {
    let cmp = ["==", "!=", "<", "<=", ">", ">="];
    let mut ops: Vec<&str> = match s {
        Scalar::Bool => vec!["&", "|", "^", "&&", "||"],
        Scalar::F32 | Scalar::F64 => vec!["+", "-", "*", "/"],
        _ => vec!["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"],
    };
    ops.extend(cmp);
    ops
}

#[augur::staged]
fn result_type(s: Scalar, op: &str) -> Scalar {
    if ["==", "!=", "<", "<=", ">", ">=", "&&", "||"].contains(&op) {
        Scalar::Bool
    } else {
        s
    }
}

/// `fn case(inp, out) { var a: A = ...; var b: B = ...; *out = <expr>; }`.
#[augur::staged]
fn case(a: Scalar, b: Scalar, out: Scalar, expr: &str) -> String {
    format!(
        "fn case(inp: *mut u64, out: *mut u64) {{\n\
           var a: {a} = *(inp as *mut {a});\n\
           var b: {b} = *((inp + 1) as *mut {b});\n\
           *(out as *mut {o}) = {expr};\n\
         }}",
        a = name(a),
        b = name(b),
        o = name(out),
    )
}

#[augur::staged]
fn pairs(a: Scalar, b: Scalar) -> Vec<[u64; 2]> {
    let (va, vb) = (values(a), values(b));
    va.iter()
        .flat_map(|&x| vb.iter().map(move |&y| [x, y]))
        .collect()
}

#[test]
fn binary_operators_on_variables_and_constants() {
    let mut cases = Vec::new();
    for s in TYPES {
        for op in binary_ops(s) {
            let r = result_type(s, op);
            let mut push = |expr: String, b: Scalar| {
                cases.push(Case {
                    ir: case(s, b, r, &expr),
                    out_size: r.size() as usize,
                    inputs: pairs(s, b),
                });
            };
            push(format!("a {op} b"), s);
            if !matches!(op, "&&" | "||") {
                for k in [0, 1, -1, 3, 100] {
                    push(format!("a {op} {}", literal(s, k)), s);
                    push(format!("{} {op} b", literal(s, k)), s);
                }
            }
            if matches!(op, "<<" | ">>") {
                push(format!("(a {op} (b as i32) : {})", name(s)), s);
                for k in [0, 1, 7, 8, 15, 16, 31, 40, 63] {
                    push(format!("a {op} {k}"), s);
                }
            }
        }
    }
    run_cases("ops-binary", &cases);
}

#[test]
fn unary_operators_and_select() {
    let mut cases = Vec::new();
    for s in TYPES {
        let mut exprs: Vec<(String, Scalar)> = Vec::new();
        match s {
            Scalar::Bool => exprs.push(("!a".into(), s)),
            Scalar::F32 | Scalar::F64 => exprs.push(("-a".into(), s)),
            _ => {
                exprs.push(("-a".into(), s));
                exprs.push(("~a".into(), s));
                exprs.push(("-(a * b)".into(), s));
            }
        }
        exprs.push(("a < b ? a : b".into(), s));
        exprs.push(("(a as bool) ? b : a".into(), s));
        exprs.push(("!(a as bool) && (b as bool)".into(), Scalar::Bool));
        for (e, r) in exprs {
            cases.push(Case {
                ir: case(s, s, r, &e),
                out_size: r.size() as usize,
                inputs: pairs(s, s),
            });
        }
    }
    run_cases("ops-unary", &cases);
}

#[test]
fn casts_between_every_pair_of_scalars() {
    let mut cases = Vec::new();
    for from in TYPES {
        for to in TYPES {
            let inputs = values(from).into_iter().map(|x| [x, 0]).collect();
            cases.push(Case {
                ir: case(from, Scalar::I32, to, &format!("(a as {})", name(to))),
                out_size: to.size() as usize,
                inputs,
            });
            // Arithmetic on a cast: narrow results wrap.
            if to.is_int() && from.is_int() {
                let inputs = pairs(from, from);
                cases.push(Case {
                    ir: case(
                        from,
                        from,
                        to,
                        &format!("(a as {t}) + (b as {t})", t = name(to)),
                    ),
                    out_size: to.size() as usize,
                    inputs,
                });
            }
        }
    }
    run_cases("ops-casts", &cases);
}
