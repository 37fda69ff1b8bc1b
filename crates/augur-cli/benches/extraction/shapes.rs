//! Tables 1 to 4: the program shapes of the BuildIt comparison
//! (`augur_cli::programs`): straight-line code, sequential ifs, nested dyn
//! loops, and one dyn loop containing n ifs, each row checked and timed.

use crate::measure::{check_structured, count, measure, phases, us_pair, us_per_run, Plan, Sample};
use augur_cli::programs::{self, FILLER};

// ---------------------------------------------------------------------------
// 1. Straight-line code
// ---------------------------------------------------------------------------

pub(crate) struct StraightRow {
    pub(crate) n: usize,
    pub(crate) sample: Sample,
}

pub(crate) fn bench_straight_line(plan: &Plan) -> Vec<StraightRow> {
    println!("## 1. Straight-line code: n × `x.set(x + 1)` in a plain Rust loop\n");
    println!(
        "| n | runs | statements | min µs (median) | ns/statement | trace / structure / passes µs |"
    );
    println!("|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for n in [256, 512, 1024, 2048, 4096] {
        let (sample, first) = measure(plan, || {
            programs::straight_line(n).expect("straight-line extraction")
        });
        check_structured(&first, "straight-line");
        let c = first.c_code();
        // One statement per iteration, nothing merged or dropped.
        assert_eq!(count(&c, " + 1;"), n, "straight-line n = {n}:\n{c}");
        assert_eq!(first.stats().runs, 1);
        let s = &sample.stats;
        println!(
            "| {n} | {} | {} | {} | {:.0} | {} |",
            s.runs,
            s.statements,
            us_pair(&sample),
            sample.min().as_secs_f64() * 1e9 / n as f64,
            phases(s)
        );
        rows.push(StraightRow { n, sample });
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 2. Sequential ifs
// ---------------------------------------------------------------------------

pub(crate) struct IfsRow {
    pub(crate) n: u64,
    pub(crate) form: &'static str,
    pub(crate) sample: Sample,
}

pub(crate) fn bench_sequential_ifs(plan: &Plan) -> Vec<IfsRow> {
    println!(
        "## 2. n sequential ifs `if x.lt(k).is_true() {{ y.set(y + 1) }}`, {FILLER} statements between\n"
    );
    println!(
        "| n | loop around the ifs | runs | BuildIt runs (2n+1) | total runs | restarts | memo hits | statements | min µs (median) | µs/run | trace / structure / passes µs |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for n in [8i64, 16, 32, 64, 128, 256] {
        // A plain Rust loop around a dyn if whose condition mentions `k`:
        // the engine takes the second `if` for a loop candidate, sees the
        // operation differ and restarts once with the head marked as a
        // plain loop. `range` puts `k` in every tag: no candidate, no restart.
        let forms = [
            ("plain `for k in 0..n`", true),
            ("`augur::range(0..n)`", false),
        ];
        for (form, plain) in forms {
            let (sample, first) = measure(plan, || {
                programs::sequential_ifs(n, plain).expect("sequential ifs")
            });
            check_structured(&first, "sequential ifs");
            let c = first.c_code();
            assert_eq!(
                count(&c, "if ("),
                n as usize,
                "sequential ifs n = {n}:\n{c}"
            );
            assert_eq!(count(&c, "while (") + count(&c, "for ("), 0, "{c}");
            assert_eq!(count(&c, " + 3;"), n as usize * FILLER, "{c}");
            assert_eq!(
                first.interpret(&[3i64.into()]).expect("interpret"),
                programs::sequential_ifs_ref(n, 3).into(),
                "{c}"
            );
            let s = &sample.stats;
            println!(
                "| {n} | {form} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.runs,
                2 * n + 1,
                s.total_runs,
                s.loop_restarts,
                s.memo_hits,
                s.statements,
                us_pair(&sample),
                us_per_run(&sample),
                phases(s)
            );
            rows.push(IfsRow {
                n: n as u64,
                form,
                sample,
            });
        }
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 3. Nested dyn loops
// ---------------------------------------------------------------------------

pub(crate) struct NestRow {
    pub(crate) d: u32,
    pub(crate) sample: Sample,
}

pub(crate) fn bench_nested_loops(plan: &Plan) -> Vec<NestRow> {
    println!("## 3. Dyn loops nested d deep (recursion over a plain depth)\n");
    println!(
        "| d | runs | BuildIt runs (2d+1) | loops closed | loop audits | memo hits | min µs (median) | µs/run | trace / structure / passes µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for d in 1..=8u32 {
        let (sample, first) = measure(plan, || programs::nested_loops(d).expect("nested loops"));
        check_structured(&first, "nested loops");
        let c = first.c_code();
        assert_eq!(
            count(&c, "while (") + count(&c, "for ("),
            d as usize,
            "nested loops d = {d}:\n{c}"
        );
        // n^d iterations of the innermost statement: check the semantics
        // too, since a loop closed at the wrong point would still count.
        let want = 3i64.pow(d);
        assert_eq!(
            first.interpret(&[3i64.into()]).expect("interpret"),
            want.into(),
            "{c}"
        );
        let s = &sample.stats;
        println!(
            "| {d} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.runs,
            2 * d + 1,
            s.back_edges,
            s.loop_audits,
            s.memo_hits,
            us_pair(&sample),
            us_per_run(&sample),
            phases(s)
        );
        rows.push(NestRow { d, sample });
    }
    println!();
    rows
}

// ---------------------------------------------------------------------------
// 4. A dyn loop containing n ifs
// ---------------------------------------------------------------------------

pub(crate) struct LoopIfsRow {
    pub(crate) n: u64,
    pub(crate) sample: Sample,
}

pub(crate) fn bench_loop_with_ifs(plan: &Plan) -> Vec<LoopIfsRow> {
    println!("## 4. One dyn loop containing n ifs with different conditions\n");
    println!(
        "| n | runs | BuildIt runs (2n+3) | total runs | restarts | loop audits | memo hits | min µs (median) | µs/run | trace / structure / passes µs |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let mut rows = Vec::new();
    for n in [1i64, 2, 4, 8, 16, 32] {
        let (sample, first) = measure(plan, || {
            programs::loop_with_ifs(n).expect("dyn loop with ifs")
        });
        check_structured(&first, "loop with ifs");
        let c = first.c_code();
        assert_eq!(
            count(&c, "while (") + count(&c, "for ("),
            1,
            "loop with ifs n = {n}:\n{c}"
        );
        assert_eq!(count(&c, "if ("), n as usize, "loop with ifs n = {n}:\n{c}");
        for (x, m) in [(0i64, 0i64), (1, 7), (5, 12)] {
            let got = first.interpret(&[x.into(), m.into()]).expect("interpret");
            assert_eq!(
                got,
                programs::loop_with_ifs_ref(n, x, m).into(),
                "x = {x}, m = {m}:\n{c}"
            );
        }
        let s = &sample.stats;
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.runs,
            2 * n + 3,
            s.total_runs,
            s.loop_restarts,
            s.loop_audits,
            s.memo_hits,
            us_pair(&sample),
            us_per_run(&sample),
            phases(s)
        );
        rows.push(LoopIfsRow {
            n: n as u64,
            sample,
        });
    }
    println!();
    rows
}
