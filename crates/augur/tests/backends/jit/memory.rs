//! The JIT's forwarding of loads and stores within a block
//! (`exec/jit/memory.rs`): every way a remembered element could be stale
//! (a store through another pointer to it, a copy of the pointer, an index
//! reassigned, a variable whose address is taken, a call, a narrow index)
//! gives what C and the interpreter give.

use super::harness::{run_cases, Case};

fn case(body: &str) -> Case {
    Case {
        ir: format!(
            "extern memset(*mut void, i32, u64) -> *mut void in \"string.h\";\n\
             fn case(inp: *mut u64, out: *mut u64) {{\n\
               var a: i64 = *(inp as *mut i64);\n\
               var result: i64 = 0i64;\n\
               var p: *mut i64 = (inp as *mut i64);\n\
               {body}\n\
               *(out as *mut i64) = result;\n\
             }}"
        ),
        out_size: 8,
        inputs: vec![[0, 0], [1, 2], [5, 9], [u64::MAX, 3], [1 << 40, 7]],
    }
}

#[test]
#[augur::staged]
fn remembered_elements_are_forgotten_when_they_may_change() {
    let cases = vec![
        // Another pointer to the same element.
        case("var alias: *mut i64 = (inp as *mut i64); p[0] = 5i64; alias[0] = 7i64; result = p[0];"),
        // A copy of the pointer stands for it.
        case("var alias: *mut i64 = p; p[1] = 5i64; alias[1] = a; result = p[1] * 3i64 + alias[1];"),
        // Neighbours stay known; the element stored is reloaded.
        case("p[1] = a; var t: i64 = p[1] + p[0]; p[0] = t; p[1] = p[0] + p[1]; result = p[0] - p[1] + t;"),
        // An index reassigned: the element it named before is another.
        case("var i: i64 = 0i64; var j: i64 = i + 1i64; p[j] = 3i64; i = i + 1i64; p[i] = a; result = p[j] + p[i - 1i64];"),
        // An index copied, then the original reassigned.
        case("var i: i64 = 1i64; var j: i64 = i; p[j] = 4i64; i = 0i64; p[i] = 6i64; result = p[j] * 10i64 + p[i];"),
        // A variable whose address is taken, changed directly.
        case("var &x: i64 = 1i64; var r: *mut i64 = &x; *r = 4i64; x = a; result = *r;"),
        // A call may write anything.
        case("p[0] = 2i64; memset((p as *mut void), 1, 8u64); result = p[0];"),
        // A narrow index can wrap: never taken for a sum.
        case("var k: i32 = 0; var m: i32 = k + 1; (p as *mut i8)[m] = 9i8; k = 1; (p as *mut i8)[k] = 5i8; result = ((p as *mut i8)[m] as i64);"),
        // A loop: nothing is kept across blocks.
        case("var i: i64 = 0i64; p[1] = 0i64; while (i < (a & 7i64)) { p[1] = p[1] + i; i = i + 1i64; } result = p[1];"),
        // Negative offsets from one index.
        case("var i: i64 = 1i64; p[i - 1i64] = a; p[i] = 3i64; p[i - 1i64] = p[i - 1i64] + p[i]; result = p[i - 1i64];"),
    ];
    run_cases("jit memory forwarding", &cases);
}
