//! `omp parallel for` loops: iterations that touch disjoint memory pass,
//! any two that could clash under threads are an error naming both.

use super::{Interpreter, Value};
use crate::ir::parse;

/// Runs `body` as the body of `fn f(p: *mut i32, n: i32) -> i32` on a
/// buffer of `n` (8) ints 1..=8; gives the result or the error and the
/// buffer afterwards.
fn run(body: &str) -> (Result<Value, String>, Vec<i32>) {
    let text = format!("extern malloc(i64) -> *mut void in \"stdlib.h\";\nextern free(*mut void) -> void in \"stdlib.h\";\nfn f(p: *mut i32, n: i32) -> i32 {{\n{body}\n}}");
    let f = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut it = Interpreter::new();
    let data: Vec<i32> = (1..=8).collect();
    let p = it.memory_mut().alloc_slice(&data);
    let r = it.call(&f, &[p, Value::I32(8)]).map_err(|e| e.to_string());
    let after = it.memory().read_slice::<i32>(p, 8).expect("the buffer");
    (r, after)
}

fn race(body: &str) -> String {
    match run(body).0 {
        Ok(v) => panic!("no race found (returned {v}) in\n{body}"),
        Err(e) => e,
    }
}

const LOOP: &str = "#[pragma(\"omp parallel for\")]\nfor (var i: i32 = 0; i < n; i = i + 1)";

#[test]
fn iterations_on_their_own_elements_run_as_a_loop() {
    let (r, after) = run(&format!("{LOOP} {{ p[i] = p[i] * 2; }}\nreturn 0;"));
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [2, 4, 6, 8, 10, 12, 14, 16]);
}

#[test]
fn two_iterations_writing_one_element_are_a_race() {
    let e = race(&format!("{LOOP} {{ p[i / 2] = i; }}\nreturn 0;"));
    assert!(
        e.contains("data race in an `omp parallel for` loop: iteration i = 1 writes byte 0 of allocation 0 (host buffer), which iteration i = 0 writes; the two may run at once"),
        "{e}"
    );
}

#[test]
fn a_read_of_what_another_iteration_writes_is_a_race() {
    // Iteration 0 reads p[1]; iteration 1 writes it.
    let e = race(&format!(
        "{LOOP} {{ if (i + 1 < n) {{ p[i] = p[i + 1]; }} }}\nreturn 0;"
    ));
    assert!(
        e.contains("iteration i = 1 writes byte 4 of allocation 0 (host buffer), which iteration i = 0 reads"),
        "{e}"
    );
    // A write first, a read after: iteration 1 reads what 0 wrote.
    let e = race(&format!(
        "{LOOP} {{ p[i] = 0; if (i > 0) {{ p[0] = p[i - 1]; }} }}\nreturn 0;"
    ));
    assert!(e.contains("iteration i = 1 reads byte 0"), "{e}");
}

#[test]
fn reads_shared_by_all_iterations_are_no_race() {
    let (r, after) = run(&format!(
        "let first: i32 = p[0];\nlet total: *mut i32 = (malloc(32i64) as *mut i32);\n\
         {LOOP} {{ total[i] = p[0] + p[n - 1] + first; }}\n\
         #[pragma(\"omp parallel for\")]\nfor (var j: i32 = 0; j < n; j = j + 1) {{ p[j] = total[j]; }}\nfree((total as *mut void));\nreturn 0;"
    ));
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [10; 8]);
}

#[test]
fn an_assignment_to_a_variable_declared_outside_is_a_race() {
    let e = race(&format!(
        "var s: i32 = 0;\n{LOOP} {{ s = s + p[i]; }}\nreturn s;"
    ));
    assert!(
        e.contains("iteration i = 0 assigns `s`, which is declared outside it"),
        "{e}"
    );
    // The same through memory (its address is taken).
    let e = race(&format!(
        "var &s: i32 = 0;\n{LOOP} {{ s = s + p[i]; }}\nreturn s;"
    ));
    assert!(
        e.contains("iteration i = 1 reads byte 0 of allocation 1 (local `s`)"),
        "{e}"
    );
}

#[test]
fn what_an_iteration_declares_or_allocates_is_its_own() {
    let (r, after) = run(&format!(
        "{LOOP} {{\n var t: i32 = p[i];\n var buf: [i32; 2];\n buf[0] = t;\n buf[1] = t;\n\
         let q: *mut i32 = (malloc(4i64) as *mut i32);\n q[0] = buf[0] + buf[1];\n\
         p[i] = q[0];\n free((q as *mut void));\n}}\nreturn 0;"
    ));
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [2, 4, 6, 8, 10, 12, 14, 16]);
}

#[test]
fn a_loop_nested_in_an_iteration_is_that_iterations_thread() {
    // Each outer iteration owns a row of two; the inner loop runs serially.
    let (r, after) = run("#[pragma(\"omp parallel for schedule(static)\")]\n\
         for (var i: i32 = 0; i < 4; i = i + 1) {\n\
           #[pragma(\"omp parallel for\")]\n\
           for (var j: i32 = 0; j < 2; j = j + 1) { p[i * 2 + j] = i; }\n\
         }\nreturn 0;");
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [0, 0, 1, 1, 2, 2, 3, 3]);
}

#[test]
fn unmodelled_clauses_and_jumps_out_are_errors() {
    let e = race("var s: i32 = 0;\n#[pragma(\"omp parallel for reduction(+:s)\")]\nfor (var i: i32 = 0; i < n; i = i + 1) { s = s + p[i]; }\nreturn s;");
    assert!(e.contains("does not model the `reduction` clause"), "{e}");
    let e = race(&format!(
        "{LOOP} {{ if (i == 3) {{ return i; }} }}\nreturn 0;"
    ));
    assert!(
        e.contains("control leaves an `omp parallel for` loop's body"),
        "{e}"
    );
}

#[test]
fn the_check_ends_with_the_loop() {
    // After the loop, one thread writes what several iterations read.
    let (r, after) = run(&format!(
        "{LOOP} {{ p[i] = p[0]; }}\np[0] = 5;\np[0] = 6;\nreturn 0;"
    ));
    assert!(r.is_err(), "iteration 0 writes p[0], which the others read");
    assert_eq!(after[0], 1);
    let (r, after) = run(&format!(
        "{LOOP} {{ p[i] = i; }}\np[0] = 5;\np[0] = 6;\nreturn 0;"
    ));
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [6, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn the_threads_of_a_launch_are_checked_like_parallel_iterations() {
    // Each thread its own element: no race.
    let (r, after) = run("launch (2, 4; bid, tid) { p[bid * 4 + tid] = bid; }\nreturn 0;");
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [0, 0, 0, 0, 1, 1, 1, 1]);
    // Thread (0, 1) reads what thread (0, 0) wrote.
    let e = race("launch (2, 4; bid, tid) { p[tid] = p[0] + 1; }\nreturn 0;");
    assert!(
        e.contains("data race in a GPU kernel: thread bid = 0, tid = 1 reads byte 0 of allocation 0 (host buffer), which thread bid = 0, tid = 0 writes"),
        "{e}"
    );
}

#[test]
fn the_simulations_loops_over_threads_are_checked_thread_by_thread() {
    // The CPU simulation's phase: blocks, then the threads of each.
    let nest = |body: &str| {
        format!(
            "var b: i32;\nvar t: i32;\n#[threads]\nfor (b = 0; b < 2; b = b + 1) {{\n\
             #[threads]\nfor (t = 0; t < 4; t = t + 1) {{ {body} }}\n}}\nreturn 0;"
        )
    };
    let (r, after) = run(&nest("p[b * 4 + t] = t;"));
    assert_eq!(r, Ok(Value::I32(0)));
    assert_eq!(after, [0, 1, 2, 3, 0, 1, 2, 3]);
    // Two threads of one block write one element.
    let e = race(&nest("p[b * 4 + t / 2] = t;"));
    assert!(
        e.contains("thread b = 0, t = 1 writes byte 0 of allocation 0 (host buffer), which thread b = 0, t = 0 writes"),
        "{e}"
    );
    // Threads of different blocks, too.
    let e = race(&nest("p[t] = b;"));
    assert!(e.contains("thread b = 1, t = 0 writes byte 0"), "{e}");
}
