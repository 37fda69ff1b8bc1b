//! The standard and extended semantics, Algorithms Execute/Solve/Driver on
//! hand-written programs, and the cross-check of re-execution against the
//! classic worklist solvers on random programs.

use std::collections::BTreeSet;
use std::time::Instant;

use augur_imp::analysis::{Analysis, LiveVariables, VeryBusyExpressions};
use augur_imp::dataflow;
use augur_imp::execute::{self, Abstract, Concrete, Options, Reexecution};
use augur_imp::extended::{self, ExtEnd, ExtStuck};
use augur_imp::random::{program, Rng, Shape};
use augur_imp::semantics::{self, eval_bexpr, eval_expr, End, Reason, State, Stuck};
use augur_imp::{BExpr, Cmd, Expr, Program, Var};

fn v(x: &str) -> Expr {
    Expr::Var(x.into())
}

fn n(k: i64) -> Expr {
    Expr::Num(k)
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::Add(Box::new(a), Box::new(b))
}

fn mul(a: Expr, b: Expr) -> Expr {
    Expr::Mul(Box::new(a), Box::new(b))
}

fn set(x: &str, e: Expr) -> Cmd {
    Cmd::Assign(x.into(), e)
}

fn vars(xs: &[&str]) -> BTreeSet<Var> {
    xs.iter().map(|x| x.to_string()).collect()
}

fn label(p: &Program, i: usize) -> String {
    p.cmds[i].label.clone()
}

/// `l0: i := 0; l1: s := 0; l2: if 10 <= i then l6; l3: i := i + 1;
/// l4: s := s + i; l5: goto l2; l6: halt; l7: done`.
fn sum_loop() -> Program {
    Program::from_cmds([
        ("l0", set("i", n(0))),
        ("l1", set("s", n(0))),
        ("l2", Cmd::IfGoto(BExpr::Le(n(10), v("i")), "l6".into())),
        ("l3", set("i", add(v("i"), n(1)))),
        ("l4", set("s", add(v("s"), v("i")))),
        ("l5", Cmd::Goto("l2".into())),
        ("l6", Cmd::Halt),
        ("l7", Cmd::Done),
    ])
}

/// Two branches joining at `l5`, which reads `x`; the `else` branch `l4`
/// is explored second.
fn join() -> Program {
    Program::from_cmds([
        ("l0", set("x", n(1))),
        ("l1", Cmd::IfGoto(BExpr::Eq(v("x"), n(1)), "l4".into())),
        ("l2", set("y", n(2))),
        ("l3", Cmd::Goto("l5".into())),
        ("l4", set("z", n(3))),
        ("l5", set("y", v("x"))),
        ("l6", Cmd::Halt),
        ("l7", Cmd::Done),
    ])
}

// ---------------------------------------------------------------- semantics

#[test]
fn arithmetic_wraps_and_reads_state() {
    let mut s = State::new();
    s.set("x", 7);
    assert_eq!(eval_expr(&add(mul(v("x"), n(3)), n(-1)), &s), Ok(20));
    assert_eq!(
        eval_expr(&Expr::Sub(Box::new(n(2)), Box::new(v("x"))), &s),
        Ok(-5)
    );
    assert_eq!(eval_expr(&add(n(i64::MAX), n(1)), &s), Ok(i64::MIN));
    assert_eq!(eval_expr(&mul(v("x"), v("y")), &s), Err("y".to_string()));
}

#[test]
fn booleans_are_strict() {
    let mut s = State::new();
    s.set("x", 1);
    let eq = BExpr::Eq(v("x"), n(1));
    let not = BExpr::Not(Box::new(eq.clone()));
    assert_eq!(eval_bexpr(&eq, &s), Ok(true));
    assert_eq!(eval_bexpr(&not, &s), Ok(false));
    assert_eq!(eval_bexpr(&BExpr::Le(n(2), v("x")), &s), Ok(false));
    let or = BExpr::Or(Box::new(not.clone()), Box::new(BExpr::True));
    assert_eq!(eval_bexpr(&or, &s), Ok(true));
    // No short circuit: the paper's rules evaluate both operands.
    let and = BExpr::And(Box::new(BExpr::False), Box::new(BExpr::Eq(v("u"), n(0))));
    assert_eq!(eval_bexpr(&and, &s), Err("u".to_string()));
}

#[test]
fn unset_variable_is_stuck() {
    let p = Program::from_cmds([
        ("a", set("y", add(v("x"), n(1)))),
        ("b", Cmd::Halt),
        ("c", Cmd::Done),
    ]);
    let o = semantics::run(&p, 100);
    let stuck = Stuck {
        label: "a".into(),
        reason: Reason::Unset("x".into()),
    };
    assert_eq!(o.end, End::Stuck(stuck));
    assert_eq!((o.steps, o.trace_len()), (0, 1));
}

#[test]
fn halt_then_done_completes() {
    let p = Program::from_cmds([("a", set("x", n(2))), ("b", Cmd::Halt), ("c", Cmd::Done)]);
    let o = semantics::run(&p, 100);
    assert_eq!(o.end, End::Complete);
    assert_eq!((o.steps, o.trace_len()), (2, 3));
    let last = o.last.unwrap();
    assert_eq!((last.at, last.state.get("x")), (2, Some(2)));
}

#[test]
fn malformed_endings_are_stuck() {
    let reason = |p: &Program| match semantics::run(p, 10).end {
        End::Stuck(s) => s.reason,
        e => panic!("{e:?}"),
    };
    let halt = Program::from_cmds([("a", Cmd::Halt), ("b", Cmd::Skip)]);
    assert_eq!(reason(&halt), Reason::HaltNotBeforeDone);
    assert_eq!(
        reason(&Program::from_cmds([("a", Cmd::Skip)])),
        Reason::FallsOff
    );
    let missing = Program::from_cmds([("a", Cmd::Goto("nowhere".into()))]);
    assert_eq!(reason(&missing), Reason::MissingTarget("nowhere".into()));
    assert_eq!(reason(&Program::new(Vec::new())), Reason::Empty);
}

#[test]
fn loops_run_and_fuel_bounds_them() {
    let o = semantics::run(&sum_loop(), 1000);
    assert_eq!(o.end, End::Complete);
    assert_eq!(o.last.unwrap().state.get("s"), Some(55));
    // 2 initialisations, 10 iterations of 4 commands, the last test, halt.
    assert_eq!(o.steps, 2 + 10 * 4 + 1 + 1);
    let spin = Program::from_cmds([("a", Cmd::Goto("a".into()))]);
    let o = semantics::run(&spin, 50);
    assert_eq!((o.end, o.steps), (End::OutOfFuel, 50));
}

// -------------------------------------------------------- Execute / Driver

fn live(p: &Program) -> execute::Prophecy<Var> {
    execute::driver(p, &LiveVariables)
}

#[test]
fn straight_line_liveness() {
    let p = Program::from_cmds([
        ("l0", set("a", n(1))),
        ("l1", set("b", add(v("a"), n(1)))),
        ("l2", set("c", add(v("a"), v("b")))),
        ("l3", Cmd::Halt),
        ("l4", Cmd::Done),
    ]);
    let r = live(&p);
    let expect = [
        vars(&[]),
        vars(&["a"]),
        vars(&["a", "b"]),
        vars(&[]),
        vars(&[]),
    ];
    assert_eq!(r.beta, expect);
    // One misprediction at each reading label, then a clean run.
    assert_eq!(r.executions, 3);
    let at: Vec<_> = r.mispredictions.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(at, ["l1", "l2"]);
    assert_eq!(r.mispredictions[1].missing, vars(&["a", "b"]));
    assert_eq!(r.repairs, 0);
    assert_eq!(r.beta, dataflow::solve(&p, &LiveVariables));
}

#[test]
fn loop_liveness() {
    let p = sum_loop();
    let r = live(&p);
    let is = vars(&["i", "s"]);
    let expect = [
        vars(&[]),
        vars(&["i"]),
        is.clone(),
        is.clone(),
        is.clone(),
        is,
        vars(&[]),
        vars(&[]),
    ];
    assert_eq!(r.beta, expect);
    // Mispredictions at l2 {i}, l3 {i}, l4 {i, s}; the back edge l5 → l2
    // is first recorded when β_l2 = {i, s} already, and is repaired.
    assert_eq!(r.executions, 4);
    assert_eq!(r.repairs, 1);
    assert_eq!(r.constraints, 8);
    assert_eq!(r.beta, dataflow::solve(&p, &LiveVariables));
}

#[test]
fn join_liveness() {
    let p = join();
    let r = live(&p);
    let x = vars(&["x"]);
    let expect = [
        vars(&[]),
        x.clone(),
        x.clone(),
        x.clone(),
        x.clone(),
        x,
        vars(&[]),
        vars(&[]),
    ];
    assert_eq!(r.beta, expect);
    assert_eq!((r.executions, r.repairs), (3, 1));
}

/// The algorithm exactly as written never checks a constraint when it is
/// recorded, so a back edge or join edge met after its target's `β` grew
/// stays violated: the loop's `goto` and the join's `else` branch miss
/// variables, and the extended semantics gets stuck on those edges.
#[test]
fn algorithm_as_written_misses_late_edges() {
    let literal = Options {
        check_new_constraints: false,
    };
    let p = sum_loop();
    let r = Reexecution::new(&p, &LiveVariables, Abstract, literal).driver();
    assert_eq!(r.executions, 4);
    assert_eq!(r.beta[5], vars(&[]));
    let stuck = ExtStuck::Prediction {
        label: "l5".into(),
        to: "l2".into(),
        extra: vars(&["i", "s"]),
    };
    assert_eq!(
        extended::run_live(&p, &r.beta, 1000).end,
        ExtEnd::Stuck(stuck)
    );

    let p = join();
    let r = Reexecution::new(&p, &LiveVariables, Abstract, literal).driver();
    assert_eq!(r.beta[4], vars(&[]));
    let stuck = ExtStuck::Prediction {
        label: "l4".into(),
        to: "l5".into(),
        extra: vars(&["x"]),
    };
    assert_eq!(
        extended::run_live(&p, &r.beta, 1000).end,
        ExtEnd::Stuck(stuck)
    );
}

/// One concrete execution covers only the path it takes: for `join` that
/// is the `then` branch, so `l2`, `l3` stay unreached (empty).
#[test]
fn concrete_execution_covers_its_path() {
    let p = join();
    let r = Reexecution::new(
        &p,
        &LiveVariables,
        Concrete { fuel: 100 },
        Options::default(),
    )
    .driver();
    let x = vars(&["x"]);
    let expect = [
        vars(&[]),
        x.clone(),
        vars(&[]),
        vars(&[]),
        x.clone(),
        x,
        vars(&[]),
        vars(&[]),
    ];
    assert_eq!(r.beta, expect);
    assert_eq!((r.executions, r.repairs), (3, 0));
    let p = sum_loop();
    let r = Reexecution::new(
        &p,
        &LiveVariables,
        Concrete { fuel: 1000 },
        Options::default(),
    )
    .driver();
    assert_eq!(r.beta, dataflow::solve(&p, &LiveVariables));
}

#[test]
fn very_busy_expressions_hoist_from_both_branches() {
    let p = Program::from_cmds([
        ("l0", set("a", n(1))),
        ("l1", set("b", n(2))),
        ("l2", Cmd::IfGoto(BExpr::Le(v("a"), v("b")), "l5".into())),
        ("l3", set("x", add(v("a"), v("b")))),
        ("l4", Cmd::Goto("l6".into())),
        ("l5", set("y", add(v("a"), v("b")))),
        ("l6", set("a", mul(v("a"), n(2)))),
        ("l7", Cmd::Halt),
        ("l8", Cmd::Done),
    ]);
    let vbe = VeryBusyExpressions::new(&p);
    let ab = vbe.id(&add(v("a"), v("b"))).unwrap();
    let a2 = vbe.id(&mul(v("a"), n(2))).unwrap();
    assert_eq!(vbe.universe(), BTreeSet::from([ab, a2]));
    let both = BTreeSet::from([ab, a2]);
    let only_a2 = BTreeSet::from([a2]);
    let none = BTreeSet::new();
    let expect = [
        none.clone(),
        only_a2.clone(),
        both.clone(),
        both.clone(),
        only_a2.clone(),
        both,
        only_a2,
        none.clone(),
        none,
    ];
    assert_eq!(dataflow::very_busy(&p, &vbe), expect);
    let r = execute::driver(&p, &vbe);
    assert_eq!(vbe.very_busy(&r.beta), expect);
    // l0, l1 and l6 kill expressions they do not evaluate, and every path
    // ends at l8 (done), so those are the mispredicting labels.
    let at: Vec<_> = r.mispredictions.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(at, ["l0", "l1", "l6", "l8"]);
    assert_eq!(r.executions, 5);
}

/// `l1: y := x + 1; l2: goto l1` never ends: abstract exploration visits
/// each label once, concrete exploration stops at the first repeated
/// configuration, and both record the back edge (repaired: `β_l2` needs
/// `x`).
#[test]
fn execute_terminates_on_infinite_loops() {
    let p = Program::from_cmds([
        ("l0", set("x", n(1))),
        ("l1", set("y", add(v("x"), n(1)))),
        ("l2", Cmd::Goto("l1".into())),
        ("l3", Cmd::Halt),
        ("l4", Cmd::Done),
    ]);
    let x = vars(&["x"]);
    let expect = [vars(&[]), x.clone(), x, vars(&[]), vars(&[])];
    let r = live(&p);
    assert_eq!(r.beta, expect);
    assert_eq!((r.executions, r.repairs, r.constraints), (2, 1, 3));
    let concrete = Concrete { fuel: usize::MAX };
    let r = Reexecution::new(&p, &LiveVariables, concrete, Options::default()).driver();
    assert_eq!(r.beta, expect);
    let o = extended::run_live(&p, &r.beta, 50);
    assert_eq!((o.end, o.steps), (ExtEnd::OutOfFuel, 50));
}

#[test]
fn empty_program() {
    let p = Program::new(Vec::new());
    let r = live(&p);
    assert_eq!((r.beta.len(), r.executions), (0, 1));
    let o = extended::run_live(&p, &r.beta, 10);
    assert!(matches!(
        o.end,
        ExtEnd::Stuck(ExtStuck::Standard(Stuck {
            reason: Reason::Empty,
            ..
        }))
    ));
}

// ------------------------------------------------------ extended semantics

#[test]
fn extended_runs_with_the_analysis_result() {
    for p in [sum_loop(), join()] {
        let r = live(&p);
        let o = extended::run_live(&p, &r.beta, 1000);
        assert_eq!(o.end, ExtEnd::Complete);
        assert_eq!(o.steps, semantics::run(&p, 1000).steps);
        assert_eq!(
            extended::run(&p, &LiveVariables, &r.beta, 1000).end,
            ExtEnd::Complete
        );
    }
}

#[test]
fn mispredicted_read_is_stuck_at_the_reader() {
    let p = sum_loop();
    let mut beta = live(&p).beta;
    beta[2].remove("i");
    let stuck = ExtStuck::NotLive {
        label: "l2".into(),
        var: "i".into(),
    };
    let o = extended::run_live(&p, &beta, 1000);
    assert_eq!((o.end, o.steps), (ExtEnd::Stuck(stuck), 2));
}

#[test]
fn mispredicted_death_is_stuck_at_the_prediction() {
    let p = sum_loop();
    let mut beta = live(&p).beta;
    // `s := 0` cannot make `i` dead: l2 still needs it.
    beta[1].remove("i");
    let stuck = ExtStuck::Prediction {
        label: "l1".into(),
        to: "l2".into(),
        extra: vars(&["i"]),
    };
    assert_eq!(
        extended::run_live(&p, &beta, 1000).end,
        ExtEnd::Stuck(stuck)
    );
    // The rule-level precondition check finds a read at the same label.
    let mut beta = live(&p).beta;
    beta[4] = vars(&["s"]);
    beta[3] = vars(&["s"]);
    let o = extended::run(&p, &LiveVariables, &beta, 1000);
    assert!(
        matches!(o.end, ExtEnd::Stuck(ExtStuck::Precondition { ref label, .. }) if label == "l3")
    );
}

// ------------------------------------------------------------- cross-check

fn reachable(p: &Program) -> Vec<bool> {
    let mut seen = vec![false; p.cmds.len()];
    let mut work: Vec<usize> = p.first().into_iter().collect();
    while let Some(l) = work.pop() {
        if !std::mem::replace(&mut seen[l], true) {
            work.extend(p.successors(l));
        }
    }
    seen
}

/// Re-execution reaches only reachable labels; there it must equal the
/// worklist solution (which also covers unreachable ones).
fn agree<T: Ord + std::fmt::Debug>(
    p: &Program,
    seed: u64,
    got: &[BTreeSet<T>],
    want: &[BTreeSet<T>],
) {
    for (l, r) in reachable(p).into_iter().enumerate() {
        if r {
            assert_eq!(got[l], want[l], "seed {seed}, label {}", label(p, l));
        }
    }
}

fn shape(r: &mut Rng) -> Shape {
    Shape {
        commands: 1 + r.below(30),
        variables: 1 + r.below(6),
        initialise: r.below(4) != 0,
    }
}

/// No prophecy-related stuck configuration (standard stuckness, from
/// uninitialised variables, is allowed).
fn not_mispredicted<T: std::fmt::Debug>(seed: u64, end: &ExtEnd<T>) {
    if let ExtEnd::Stuck(s) = end {
        assert!(matches!(s, ExtStuck::Standard(_)), "seed {seed}: {s:?}");
    }
}

/// Totals over the random programs, for the report line.
#[derive(Default)]
struct Counts {
    executions: u64,
    max_executions: usize,
    repairs: u64,
    literal_wrong: u64,
    completed: u64,
}

impl Counts {
    fn add<T>(&mut self, r: &execute::Prophecy<T>) {
        self.executions += r.executions as u64;
        self.max_executions = self.max_executions.max(r.executions);
        self.repairs += r.repairs as u64;
    }
}

/// The random programs: sizes 1–30 commands (plus initialisations and
/// `halt; done`), 1–6 variables, a quarter without initialisations.
fn random_programs() -> impl Iterator<Item = (u64, Program)> {
    (0..PROGRAMS).map(|seed| {
        let mut r = Rng(seed);
        let s = shape(&mut r);
        (seed, program(&mut r, s))
    })
}

const PROGRAMS: u64 = 10_000;

/// Extended runs are checked for this many steps.
const FUEL: usize = 100;

fn check_live(p: &Program, seed: u64, c: &mut Counts) {
    let r = live(p);
    agree(p, seed, &r.beta, &dataflow::solve(p, &LiveVariables));
    let reach = reachable(p);
    assert!(
        r.beta.iter().zip(reach).all(|(b, r)| r || b.is_empty()),
        "seed {seed}"
    );
    assert!(r.executions <= 1 + p.cmds.len(), "seed {seed}");
    let o = extended::run_live(p, &r.beta, FUEL);
    not_mispredicted(seed, &o.end);
    c.completed += u64::from(o.end == ExtEnd::Complete);
    c.add(&r);
    // The extra variants on every fifth program, to keep the test quick.
    if seed % 5 != 0 {
        return;
    }
    let literal = Options {
        check_new_constraints: false,
    };
    let lit = Reexecution::new(p, &LiveVariables, Abstract, literal).driver();
    c.literal_wrong += u64::from(lit.beta != r.beta);
    // A concrete execution covers a subset of the paths, and its result
    // suffices for that execution.
    let conc = Reexecution::new(
        p,
        &LiveVariables,
        Concrete { fuel: 2 * FUEL },
        Options::default(),
    )
    .driver();
    assert!(
        conc.beta.iter().zip(&r.beta).all(|(a, b)| a.is_subset(b)),
        "seed {seed}"
    );
    not_mispredicted(seed, &extended::run_live(p, &conc.beta, FUEL).end);
}

#[test]
fn live_variables_reexecution_equals_worklist() {
    let start = Instant::now();
    let mut c = Counts::default();
    for (seed, p) in random_programs() {
        check_live(&p, seed, &mut c);
    }
    eprintln!(
        "live variables, {PROGRAMS} programs in {:.1?}: {} executions (max {}), {} repairs, \
         as written wrong on {} of {}, {} extended runs complete",
        start.elapsed(),
        c.executions,
        c.max_executions,
        c.repairs,
        c.literal_wrong,
        PROGRAMS / 5,
        c.completed,
    );
    assert!(
        c.literal_wrong > 0,
        "the gap in the algorithm as written should show"
    );
}

fn check_very_busy(p: &Program, seed: u64, c: &mut Counts) {
    let vbe = VeryBusyExpressions::new(p);
    let r = execute::driver(p, &vbe);
    let want = dataflow::very_busy(p, &vbe);
    agree(p, seed, &vbe.very_busy(&r.beta), &want);
    // Unreachable labels keep `NVB = ∅`, i.e. everything very busy.
    let reach = reachable(p);
    assert!(
        r.beta.iter().zip(reach).all(|(b, r)| r || b.is_empty()),
        "seed {seed}"
    );
    // The generic least solution of the complement is the complement of
    // the greatest solution, at every label (every fifth program).
    if seed % 5 == 0 {
        let solved = vbe.very_busy(&dataflow::solve(p, &vbe));
        assert_eq!(solved, want, "seed {seed}");
    }
    not_mispredicted(seed, &extended::run(p, &vbe, &r.beta, FUEL).end);
    c.add(&r);
}

#[test]
fn very_busy_reexecution_equals_worklist() {
    let start = Instant::now();
    let mut c = Counts::default();
    for (seed, p) in random_programs() {
        check_very_busy(&p, seed, &mut c);
    }
    eprintln!(
        "very busy expressions, {PROGRAMS} programs in {:.1?}: {} executions (max {}), {} repairs",
        start.elapsed(),
        c.executions,
        c.max_executions,
        c.repairs,
    );
}

#[test]
fn analyses_are_named() {
    assert_eq!(LiveVariables.name(), "live variables");
    let p = Program::from_cmds([("l0", Cmd::Done)]);
    assert!(VeryBusyExpressions::new(&p).name().contains("very busy"));
}
