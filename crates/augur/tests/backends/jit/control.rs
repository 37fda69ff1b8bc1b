//! Control flow, memory and calls: loops with `break` and `continue`,
//! `goto` in both directions and into loops, launches, local arrays
//! (nested ones too), address-taken variables, pointer arithmetic and
//! comparison, short-circuiting operators guarding memory reads, and
//! calls of libc and libm. The JIT against C and the interpreter.

use super::harness::{run_cases, Case};

/// Inputs: `inp[0]` and `inp[1]` as pairs of small and edge `i32`s.
#[augur::staged]
fn inputs() -> Vec<[u64; 2]> {
    let xs: [i32; 9] = [0, 1, 2, 5, 9, -1, -6, 40, 1000];
    xs.iter()
        .flat_map(|&a| xs.iter().map(move |&b| [a as u32 as u64, b as u32 as u64]))
        .collect()
}

/// A case reading `a` and `b` (`i32`) and writing `result` (an `i64`).
#[augur::staged]
fn case(body: &str) -> Case {
    Case {
        ir: format!(
            "fn case(inp: *mut u64, out: *mut u64) {{\n\
               var a: i32 = *(inp as *mut i32);\n\
               var b: i32 = *((inp + 1) as *mut i32);\n\
               var result: i64 = 0i64;\n\
               {body}\n\
               *(out as *mut i64) = result;\n\
             }}"
        ),
        out_size: 8,
        inputs: inputs(),
    }
}

/// A case with externs declared before it.
#[augur::staged]
fn case_with(externs: &str, body: &str) -> Case {
    let mut c = case(body);
    c.ir = format!("{externs}\n{}", c.ir);
    c
}

#[test]
#[augur::staged]
fn loops_breaks_continues_and_returns() {
    let cases = vec![
        // while with continue and break
        case(
            "var i: i32 = 0;
             while (i < a) {
               i = i + 1;
               if (i % 3 == 0) { continue; }
               if (i > b && b > 0) { break; }
               result = result + (i as i64);
             }",
        ),
        // for: continue runs the step
        case(
            "for (var i: i32 = 0; i < 20; i = i + 1) {
               if (i == b) { continue; }
               if (i == a + 7) { break; }
               result = result * 3i64 + (i as i64);
             }",
        ),
        // nested loops, inner break, early return from a loop
        case(
            "for (var i: i32 = 0; i < 6; i = i + 1) {
               var j: i32 = 0;
               while (true) {
                 j = j + 1;
                 if (j > i) { break; }
                 result = result + ((i * j) as i64);
                 if (result > (a as i64) * 4i64 && a > 3) {
                   *(out as *mut i64) = 0i64 - result;
                   return;
                 }
               }
             }",
        ),
        // a declaration without initializer inside a loop
        case(
            "var k: i32 = 0;
             while (k < 4) {
               var t: i32;
               t = k * b;
               result = result + (t as i64);
               k = k + 1;
             }",
        ),
        // a launch: its loop nest over blocks and threads
        case(
            "launch (3, 4; bid, tid) {
               result = result + ((bid * 10 + tid) as i64) * (a as i64);
             }",
        ),
    ];
    run_cases("control-loops", &cases);
}

#[test]
#[augur::staged]
fn gotos_forward_backward_and_into_loops() {
    let cases = vec![
        // a backward goto as a loop
        case(
            "var i: i32 = 0;
             L1:
             i = i + 1;
             result = result + (i as i64);
             if (i < 10 && i < a) { goto L1; }",
        ),
        // forward gotos out of nested loops (a labelled break)
        case(
            "for (var i: i32 = 0; i < 8; i = i + 1) {
               for (var j: i32 = 0; j < 8; j = j + 1) {
                 if (i * j > a) { goto L2; }
                 result = result + 1i64;
               }
             }
             result = result + 1000i64;
             L2:
             result = result * 2i64;",
        ),
        // a goto into the middle of a loop body: the rest of the body, then the loop
        case(
            "var i: i32 = 0;
             if (a > 2) { goto L3; }
             while (i < 5) {
               result = result + 100i64;
               L3:
               result = result + 1i64;
               i = i + 1;
             }",
        ),
    ];
    run_cases("control-gotos", &cases);
}

#[test]
#[augur::staged]
fn arrays_pointers_and_addresses() {
    let cases = vec![
        // a local array filled and summed through an index and a pointer
        case(
            "var arr: [i32; 8];
             for (var i: i32 = 0; i < 8; i = i + 1) { arr[i] = i * a + b; }
             var p: *mut i32 = &arr[2];
             *p = 7;
             p[1] = p[1] + 1;
             for (var i2: i32 = 0; i2 < 8; i2 = i2 + 1) { result = result * 31i64 + (arr[i2] as i64); }",
        ),
        // a two-dimensional array, a pointer to a row, pointer differences
        case(
            "var m: [[i16; 3]; 4];
             for (var i: i32 = 0; i < 4; i = i + 1) {
               for (var j: i32 = 0; j < 3; j = j + 1) { m[i][j] = (((i * 3 + j) * a) as i16); }
             }
             var row: *mut [i16; 3] = &m[1];
             var q: *mut i16 = &m[2][1];
             var first: *mut i16 = &m[0][0];
             result = (row[1][2] as i64) + ((q - first) as i64) * 1000i64;
             if (q > first) { result = result + 7i64; }
             if (q <= first) { result = result - 7i64; }",
        ),
        // address-taken scalars change through pointers
        case(
            "var &x: i32 = a;
             var px: *mut i32 = &x;
             *px = *px + b;
             var &y: f64 = 1.5;
             var py: *mut f64 = &y;
             *py = *py * (x as f64);
             result = (x as i64) + (y as i64);",
        ),
        // `&&`, `||` and `?:` guard reads through a null pointer
        case(
            "var p: *mut i32 = a > 0 ? (inp as *mut i32) : (0i64 as *mut i32);
             if (p != (0i64 as *mut i32) && *p > 1) { result = 1i64; }
             if (p == (0i64 as *mut i32) || *p > 5) { result = result + 10i64; }
             result = result + (p != (0i64 as *mut i32) ? (*p as i64) : 100i64);
             result = result + (b != 0 ? ((a / b) as i64) : 0i64);",
        ),
        // pointer arithmetic with unsigned and negative offsets
        case(
            "var arr: [i64; 6];
             for (var i: i32 = 0; i < 6; i = i + 1) { arr[i] = (i as i64) * 5i64; }
             var end: *mut i64 = &arr[5];
             var k: u32 = 2u32;
             result = *(end - k) + *(end + (0 - 3)) + ((end - (&arr[0])) : i64);",
        ),
    ];
    run_cases("control-memory", &cases);
}

#[test]
#[augur::staged]
fn calls_of_libc_and_libm() {
    let externs = "extern abs(i32) -> i32 in \"stdlib.h\";\n\
                   extern sqrt(f64) -> f64 in \"math.h\";\n\
                   extern fmaxf(f32, f32) -> f32 in \"math.h\";\n\
                   extern floor(f64) -> f64 in \"math.h\";";
    let cases = vec![case_with(
        externs,
        "result = (abs(a - b) as i64);
         result = result * 100i64 + (sqrt(((a * a) as f64)) as i64);
         result = result * 100i64 + (fmaxf((a as f32), (b as f32) * 0.5f32) as i64);
         result = result * 100i64 + (floor(((b as f64) / 4.0)) as i64);",
    )];
    run_cases("control-calls", &cases);
}
