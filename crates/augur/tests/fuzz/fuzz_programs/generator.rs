//! The generator: the random program of a seed, inside the language's
//! bounds (depth, statement count, unrolled sizes), with early exits only
//! where they leave their block live.

use crate::common::Rng;
use crate::fuzz_programs::language::{
    Adapter, AdapterKind, BinOp, Bind, Bound, ClosureForm, CmpOp, Cond, Decide, Expr, Hidden, Init,
    Machine, Mutation, Pass, Program, Read, Source, Stmt, MAX_DEPTH, MAX_PLAIN_UNROLL, MAX_STMTS,
    MAX_UNROLL, VARS,
};

/// Where a statement is generated.
#[derive(Clone)]
struct Ctx {
    depth: u32,
    /// Counters of the enclosing `while`s, readable in expressions.
    counters: Vec<usize>,
    /// Inside a `while` or a plain loop: an `if` there may `break`.
    in_loop: bool,
    /// Under an `if` inside the innermost loop: `break`/`continue` allowed.
    loop_guarded: bool,
    /// Plain-value statements may be made.
    plain_values: bool,
    /// Plain state changed through methods (`Mutate`, `Branch`, `Use`,
    /// `Machine`) may be made.
    methods: bool,
    /// Iterator adapters with deciding closures may be made.
    adapters: bool,
    /// Immutable bindings of plain values chosen by dyn decisions
    /// (`Hidden`) may be made.
    hidden: bool,
    /// Inside a dyn loop (`While`, `Machine`).
    in_dyn_loop: bool,
    /// The plain state is only read here, not changed: inside a dyn loop
    /// inside a dyn loop or a `Machine` (each plain state an inner loop is
    /// entered with gets its own copy of it, per state of the outer loop),
    /// and in the body of an adapter that accumulates (see `adapter`).
    reads_only: bool,
    /// Under an `if`: `return` allowed.
    guarded: bool,
    /// `return` may be made (not in the body of an adapter that
    /// accumulates, see `adapter`).
    returns: bool,
    plain_unroll: u32,
    unroll: u32,
}

/// A field of the plain state (see `PlainState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Stack,
    Slot,
    Map,
    Set,
    Phase,
}

struct Gen {
    rng: Rng,
    /// The kinds of binding `Hidden` makes (`AUGUR_FUZZ_BINDS`), or the
    /// default mix.
    binds: Option<Vec<&'static str>>,
    /// The default mix makes the bindings the engine does not track yet
    /// (see [`untracked_forms`]).
    untracked: bool,
    /// The two fields of the plain state this program changes and reads:
    /// paths that took different sides keep apart while their states
    /// differ, so all five at once would multiply the code past the
    /// suite's limits.
    fields: [Field; 2],
    /// The period of the program's `bump`s (1 to 7).
    period: i32,
    /// An adapter whose closure's calls are not counted was made (see
    /// `adapter`).
    uncounted: bool,
    stmts_left: usize,
    counters: usize,
}

impl Gen {
    fn constant(&mut self) -> i32 {
        if self.rng.chance(80) {
            self.rng.below(13) as i32 - 4
        } else {
            // Values that make wrapping and bit operations matter.
            self.rng.pick(&[
                i32::MIN,
                i32::MAX,
                -1,
                0x5555_5555,
                0x0f0f,
                1 << 16,
                1000,
                -77,
            ])
        }
    }

    fn expr(&mut self, ctx: &Ctx, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(40) {
            return match self.rng.below(10) {
                0..=4 => {
                    // Counters of enclosing loops are readable too.
                    let n = VARS + ctx.counters.len();
                    let i = self.rng.below(n as u64) as usize;
                    Expr::Var(if i < VARS { i } else { ctx.counters[i - VARS] })
                }
                5..=6 => Expr::Param(self.rng.below(2) as usize),
                _ => Expr::Const(self.constant()),
            };
        }
        let op = self.rng.pick(&[
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
        ]);
        Expr::Bin(
            op,
            Box::new(self.expr(ctx, depth - 1)),
            Box::new(self.expr(ctx, depth - 1)),
        )
    }

    fn cond(&mut self, ctx: &Ctx, depth: u32) -> Cond {
        match self.rng.below(10) {
            0 if depth > 0 => Cond::Not(Box::new(self.cond(ctx, depth - 1))),
            1 if depth > 0 => Cond::And(
                Box::new(self.cond(ctx, depth - 1)),
                Box::new(self.cond(ctx, depth - 1)),
            ),
            2 if depth > 0 => Cond::Or(
                Box::new(self.cond(ctx, depth - 1)),
                Box::new(self.cond(ctx, depth - 1)),
            ),
            _ => {
                let op = self.rng.pick(&[
                    CmpOp::Lt,
                    CmpOp::Le,
                    CmpOp::Gt,
                    CmpOp::Ge,
                    CmpOp::Eq,
                    CmpOp::Ne,
                ]);
                Cond::Cmp(op, self.expr(ctx, 2), self.expr(ctx, 1))
            }
        }
    }

    fn bound(&mut self) -> Bound {
        if self.rng.chance(60) {
            Bound::Param(self.rng.below(2) as usize)
        } else {
            Bound::Const(self.rng.below(5) as i32)
        }
    }

    /// Whether the walk writes a state change as a tail expression.
    fn tail(&mut self) -> bool {
        self.rng.chance(30)
    }

    /// One of the plain state's fields this program changes.
    fn field(&mut self) -> Field {
        let f = self.fields;
        f[self.rng.below(f.len() as u64) as usize]
    }

    /// Values and keys come from small sets, so that the plain states a
    /// dyn loop carries repeat soon.
    fn mutation(&mut self) -> Mutation {
        let c = self.rng.below(3) as i32 - 1;
        let key = self.rng.below(2) as i32;
        let roll = self.rng.below(3);
        match (self.field(), roll) {
            (Field::Stack, 0) => Mutation::Push(c),
            (Field::Stack, 1) => Mutation::Pop,
            (Field::Stack, _) => Mutation::Truncate(self.rng.below(2) as usize),
            (Field::Slot, 0) => Mutation::Take,
            (Field::Slot, 1) => Mutation::GetOrInsert(c),
            (Field::Slot, _) => Mutation::Replace(c),
            (Field::Map, 0) => Mutation::Remove(key),
            (Field::Map, _) => Mutation::Insert(key, c),
            (Field::Set, 0) => Mutation::Unmark(key),
            (Field::Set, _) => Mutation::Mark(key),
            (Field::Phase, _) => Mutation::Bump(1 + self.rng.below(3) as i32, self.period),
        }
    }

    fn source(&mut self) -> Source {
        let key = self.rng.below(2) as i32;
        let first = self.rng.chance(50);
        if self.rng.chance(15) {
            return Source::Plain;
        }
        match self.field() {
            Field::Stack if first => Source::Len,
            Field::Stack => Source::Top,
            Field::Slot => Source::Slot,
            Field::Map if first => Source::Keys,
            Field::Map => Source::Get(key),
            Field::Set => Source::Has(key),
            Field::Phase => Source::Phase,
        }
    }

    fn adapter(&mut self, kind: AdapterKind, ctx: &Ctx, inner: &Ctx, long: bool) -> Stmt {
        // Every closure counts its calls (named ones, a helper's), so the
        // named and helper forms go anywhere the inline one does.
        let _ = (ctx, long);
        let uncounted = true;
        let form = match kind {
            AdapterKind::ForEach | AdapterKind::Any | AdapterKind::Count
                if self.rng.chance(20) && uncounted =>
            {
                ClosureForm::Named
            }
            AdapterKind::ForEach | AdapterKind::TryForEach if self.rng.chance(20) && uncounted => {
                ClosureForm::Helper
            }
            _ => ClosureForm::Inline,
        };
        self.uncounted |= form != ClosureForm::Inline;
        let (k, body_ctx) = if long {
            let k = 5 + self.rng.below(36) as u32;
            let body_ctx = Ctx {
                plain_unroll: MAX_PLAIN_UNROLL,
                // Past the bound: nothing repeats inside.
                unroll: MAX_UNROLL + 1,
                ..inner.clone()
            };
            (k, body_ctx)
        } else if accumulates(kind) {
            // What these accumulate lives in the standard library's frames,
            // where tags cannot see it: paths that took different sides
            // never share code inside the adapter (each decision of each
            // call doubles them), so a few calls of a shallow body. No
            // `return` in it: the `Dyn` it returns waits in `exit` while
            // the adapter finishes, and every join of two such paths is
            // then found by a failing link audit that restarts the attempt
            // (three `fold`s in a row take over 40 attempts and 14,000
            // runs).
            let room = (MAX_UNROLL / ctx.unroll).min(3);
            let k = self.rng.below(room as u64 + 1) as u32;
            let body_ctx = Ctx {
                depth: inner.depth.max(MAX_DEPTH - 1),
                returns: false,
                reads_only: true,
                adapters: false,
                unroll: ctx.unroll * k.max(1),
                ..inner.clone()
            };
            (k, body_ctx)
        } else {
            let room = (MAX_UNROLL / ctx.unroll).min(4);
            let k = self.rng.below(room as u64 + 1) as u32;
            let body_ctx = Ctx {
                unroll: ctx.unroll * k.max(1),
                ..inner.clone()
            };
            (k, body_ctx)
        };
        let counter = VARS + self.counters;
        self.counters += 1;
        let mut counters = ctx.counters.clone();
        counters.push(counter);
        let body_ctx = Ctx {
            counters,
            in_loop: true,
            loop_guarded: false,
            ..body_ctx
        };
        let body = if form == ClosureForm::Named {
            Stmt::Block(vec![])
        } else {
            Stmt::Block(self.block(&body_ctx))
        };
        let cond = self.cond(&body_ctx, 1);
        Stmt::Adapter(Box::new(Adapter {
            kind,
            form,
            k,
            counter,
            var: self.rng.below(VARS as u64) as usize,
            body,
            cond,
        }))
    }

    /// Two different small constants.
    fn two(&mut self, lo: i32, n: u64) -> (i32, i32) {
        let x = lo + self.rng.below(n) as i32;
        let y = lo + (x - lo + 1 + self.rng.below(n - 1) as i32) % n as i32;
        (x, y)
    }

    /// An immutable binding of what a dyn decision chose, and the keys it
    /// can give.
    fn bind(&mut self, ctx: &Ctx) -> (Bind, Vec<i32>) {
        // The plain slot is set on dyn branches (`Branch`) and by
        // adapters: a binding may take it, where the state may change.
        let slot =
            !ctx.reads_only && (self.fields.contains(&Field::Slot) && ctx.methods || ctx.adapters);
        let kind = match &self.binds {
            None if slot && self.rng.chance(15) => "slot",
            None => self.default_bind(),
            Some(names) => {
                let names: Vec<&'static str> = (names.iter().copied())
                    .filter(|n| *n != "slot" || slot)
                    .collect();
                if names.is_empty() {
                    "call"
                } else {
                    self.rng.pick(&names)
                }
            }
        };
        if kind == "slot" {
            return (Bind::TakeSlot, vec![-2, -1, 0, 1]);
        }
        let c = self.cond(ctx, 1);
        let b = self.binding(kind, c);
        let mut keys = vec![b.key(true, None), b.key(false, None)];
        keys.dedup();
        (b, keys)
    }

    /// The kind of binding (a name of [`BINDS`] but "slot") of the default
    /// mix: the immutable `let`s the engine tracks three times in five, the
    /// other ways a chosen value reaches later code (`Pass`, `Struct`,
    /// `MutStruct`) two in five, a quarter of those the twin known to be
    /// exact (all of them unless `self.untracked`).
    fn default_bind(&mut self) -> &'static str {
        let twin = self.rng.chance(25) || !self.untracked;
        let pass = self.rng.pick(&["argument", "receiver", "arm"]);
        match (self.rng.below(100), twin) {
            (0..=17, _) => "call",
            (18..=26, _) => "bool",
            (27..=35, _) => "tuple",
            (36..=42, _) => "reset",
            (43..=49, _) => "take",
            (50..=59, _) => "weight",
            (60..=83, false) => pass,
            (60..=83, true) => match pass {
                "argument" => "typed_argument",
                "receiver" => "typed_receiver",
                _ => "typed_arm",
            },
            (84..=91, false) => "struct",
            (84..=91, true) => "hash_struct",
            (_, false) => "mut_struct",
            (_, true) => "hash_mut_struct",
        }
    }

    /// The binding of kind `kind` (a name of [`BINDS`] but "slot") on `c`.
    fn binding(&mut self, kind: &str, c: Cond) -> Bind {
        let arm = self
            .rng
            .pick(&[Pass::Match, Pass::Field, Pass::IfLet, Pass::WhileLet]);
        let (how, typed) = match kind {
            "argument" | "typed_argument" => (Pass::Argument, kind.starts_with("typed")),
            "receiver" | "typed_receiver" => (Pass::Receiver, kind.starts_with("typed")),
            "arm" | "typed_arm" => (arm, kind.starts_with("typed")),
            _ => (arm, false),
        };
        let (x, y) = self.two(-3, 7);
        match kind {
            "call" => Bind::Call(c, x, y, self.rng.chance(50)),
            "bool" => Bind::Bool(c),
            "tuple" => Bind::Tuple(c, x, y),
            "reset" => Bind::Reset(c, 1 + self.rng.below(3) as i32),
            "take" => Bind::Take(c, self.rng.below(4) as i32),
            // Quarters from -2 to 3.
            "weight" => {
                let (x, y) = self.two(-8, 21);
                Bind::Weight(c, x, y, self.rng.chance(50))
            }
            "struct" | "hash_struct" => Bind::Struct(c, x, y, kind == "hash_struct"),
            "mut_struct" | "hash_mut_struct" => {
                Bind::MutStruct(c, 1 + self.rng.below(3) as i32, kind == "hash_mut_struct")
            }
            _ => Bind::Pass(c, x, y, how, typed),
        }
    }

    /// `Hidden`: one or two bindings, statements after each, and a read of
    /// their key.
    fn hidden(&mut self, ctx: &Ctx, inner: &Ctx) -> Stmt {
        // Each binding keeps the paths that chose differently apart while
        // it lives (as tracked, it must): sized as a repetition of 2.
        let (first, keys) = self.bind(ctx);
        let between_ctx = Ctx {
            unroll: ctx.unroll * 2,
            ..inner.clone()
        };
        let between = Stmt::Block(self.block(&between_ctx));
        // One binding only in a dyn loop of a program whose state changes
        // through methods: each plain state the loop carries gets its own
        // copy of the loop (with two, a 3,000-program run found one
        // program past the run limit when the bindings are tracked).
        let two = !(ctx.in_dyn_loop && ctx.methods);
        let (second, keys, after) = if two && self.rng.chance(50) {
            let (b, more) = self.bind(&between_ctx);
            let keys = keys
                .iter()
                .flat_map(|k| {
                    more.iter()
                        .map(move |m| k.wrapping_mul(10).wrapping_add(*m))
                })
                .collect();
            let after_ctx = Ctx {
                unroll: ctx.unroll * 4,
                ..inner.clone()
            };
            (Some(b), keys, Stmt::Block(self.block(&after_ctx)))
        } else if self.rng.chance(50) {
            (None, keys, Stmt::Block(self.block(&between_ctx)))
        } else {
            (None, keys, Stmt::Block(vec![]))
        };
        let read = if self.rng.chance(40) {
            let target = self.rng.pick(&keys);
            Read::Guarded(self.cond(ctx, 1), target)
        } else {
            Read::Decide(self.rng.pick(&[
                Decide::Op,
                Decide::Branch,
                Decide::Bound,
                Decide::Nested,
                Decide::Nested,
            ]))
        };
        Stmt::Hidden(Box::new(Hidden {
            first,
            between,
            second,
            after,
            var: self.rng.below(VARS as u64) as usize,
            read,
        }))
    }

    fn block(&mut self, ctx: &Ctx) -> Vec<Stmt> {
        let n = 1 + self.rng.below(4) as usize;
        let mut v = Vec::new();
        for _ in 0..n {
            if self.stmts_left == 0 {
                break;
            }
            v.push(self.stmt(ctx));
        }
        v
    }

    fn stmt(&mut self, ctx: &Ctx) -> Stmt {
        self.stmts_left = self.stmts_left.saturating_sub(1);
        let inner = Ctx {
            depth: ctx.depth + 1,
            ..ctx.clone()
        };
        // Early exits only under an `if`, so they do not make the rest of
        // their block dead on every path.
        let roll = self.rng.below(100);
        if ctx.loop_guarded && roll < 10 {
            return if roll < 5 {
                Stmt::Break
            } else {
                Stmt::Continue
            };
        }
        if ctx.guarded && ctx.returns && roll >= 96 {
            return Stmt::Return(self.expr(ctx, 2));
        }
        if ctx.plain_values && roll < 25 {
            return if self.rng.chance(50) {
                Stmt::SetPlain(self.rng.below(7) as i32 - 3)
            } else {
                Stmt::UsePlain(self.rng.below(VARS as u64) as usize)
            };
        }
        if ctx.methods && (25..37).contains(&roll) {
            let var = self.rng.below(VARS as u64) as usize;
            // Changes in dyn loops at half the rate: each plain state a loop
            // carries gets its own copy of the loop.
            let fewer = ctx.in_dyn_loop && self.rng.chance(50);
            let reads = if ctx.reads_only || fewer { 60 } else { 0 };
            return match self.rng.below(100).max(reads) {
                0..=34 => {
                    let m = self.mutation();
                    Stmt::Mutate(m, self.tail())
                }
                35..=59 => {
                    let c = self.cond(ctx, 1);
                    let (t, e) = (self.mutation(), self.mutation());
                    Stmt::Branch(c, t, e, self.tail())
                }
                _ => {
                    let how = self.rng.pick(&[
                        Decide::Op,
                        Decide::Branch,
                        Decide::Bound,
                        Decide::Nested,
                        Decide::Nested,
                    ]);
                    Stmt::Use(self.source(), var, how)
                }
            };
        }
        if ctx.depth >= MAX_DEPTH || self.stmts_left == 0 {
            return Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(ctx, 3));
        }
        // A dyn loop that steps a plain machine every turn; not inside
        // another dyn loop, whose copies per plain state would multiply
        // with its own.
        if ctx.methods && !ctx.in_dyn_loop && ctx.unroll <= MAX_UNROLL && self.rng.chance(8) {
            let counter = VARS + self.counters;
            self.counters += 1;
            let bound = self.bound();
            let machine = match self.rng.below(3) {
                0 => {
                    let n = 1 + self.rng.below(7);
                    Machine::Ring((0..n).map(|_| self.rng.below(7) as i32 - 3).collect())
                }
                1 => Machine::Toggle(self.rng.below(7) as i32 - 3),
                _ => Machine::Counter(1 + self.rng.below(3) as i32, 1 + self.rng.below(7) as i32),
            };
            let var = self.rng.below(VARS as u64) as usize;
            let mut counters = ctx.counters.clone();
            counters.push(counter);
            // The machine's period copies its body: sized as a repetition
            // of 4.
            let body_ctx = Ctx {
                counters,
                in_loop: true,
                loop_guarded: false,
                in_dyn_loop: true,
                reads_only: true,
                unroll: ctx.unroll * 4,
                ..inner.clone()
            };
            let body = Box::new(Stmt::Block(self.block(&body_ctx)));
            let tail = self.tail();
            return Stmt::Machine {
                counter,
                bound,
                machine,
                var,
                body,
                tail,
            };
        }
        // An iterator adapter whose closure walks a body and decides.
        if ctx.adapters && self.rng.chance(12) {
            let kind = self.rng.pick(&[
                AdapterKind::ForEach,
                AdapterKind::TryForEach,
                AdapterKind::Any,
                AdapterKind::All,
                AdapterKind::Count,
                AdapterKind::Position,
                AdapterKind::Fold,
                AdapterKind::MapCollect,
                AdapterKind::MapSum,
            ]);
            // Long ones where nothing else repeats, as `PlainLoop`s; not
            // those that accumulate (see `adapter`).
            let long = ctx.unroll == 1
                && !accumulates(kind)
                && !(ctx.in_dyn_loop && ctx.methods)
                && self.rng.chance(30);
            if long || ctx.unroll * 2 <= MAX_UNROLL {
                return self.adapter(kind, ctx, &inner, long);
            }
        }
        // A long plain loop with dyn exits, where nothing else repeats (so
        // the code stays small).
        // (Not in a dyn loop of a program whose state changes through
        // methods: its copies per state would each hold the long loop.)
        if ctx.plain_values
            && ctx.unroll == 1
            && !(ctx.in_dyn_loop && ctx.methods)
            && self.rng.chance(8)
        {
            let k = 1 + self.rng.below(100) as u32;
            let body_ctx = Ctx {
                in_loop: true,
                loop_guarded: false,
                plain_unroll: MAX_PLAIN_UNROLL,
                // Past the bound: nothing repeats inside.
                unroll: MAX_UNROLL + 1,
                ..inner
            };
            return Stmt::PlainLoop(k, Box::new(Stmt::Block(self.block(&body_ctx))));
        }
        // Immutable bindings of what dyn decisions chose, read later. In a
        // dyn loop of a program whose state changes through methods, each
        // plain state the loop carries gets its own copy of the paths the
        // bindings keep apart: at most two repetitions of them there (four,
        // in a loop over a phase of period 7, passed the run limit).
        let room = if ctx.in_dyn_loop && ctx.methods {
            16
        } else {
            4
        };
        if ctx.hidden && ctx.unroll * room <= MAX_UNROLL && self.rng.chance(20) {
            return self.hidden(ctx, &inner);
        }
        match self.rng.below(100) {
            0..=29 => Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(ctx, 3)),
            30..=54 => {
                let then_ctx = Ctx {
                    loop_guarded: ctx.in_loop,
                    guarded: true,
                    ..inner
                };
                let c = self.cond(ctx, 1);
                let t = self.stmt(&then_ctx);
                let e = if self.rng.chance(40) && self.stmts_left > 0 {
                    self.stmt(&then_ctx)
                } else {
                    Stmt::Block(vec![])
                };
                Stmt::If(c, Box::new(t), Box::new(e))
            }
            // No dyn loops inside a long plain loop: they are covered
            // inside `Repeat`s, and a hundred of them make programs of tens
            // of thousands of operations.
            55..=69 if ctx.unroll <= MAX_UNROLL => {
                let counter = VARS + self.counters;
                self.counters += 1;
                let bound = self.bound();
                let mut counters = ctx.counters.clone();
                counters.push(counter);
                let body_ctx = Ctx {
                    counters,
                    in_loop: true,
                    loop_guarded: false,
                    in_dyn_loop: true,
                    reads_only: ctx.reads_only || ctx.in_dyn_loop,
                    ..inner
                };
                let body = Stmt::Block(self.block(&body_ctx));
                Stmt::While {
                    counter,
                    bound,
                    body: Box::new(body),
                }
            }
            70..=79 => Stmt::Block(self.block(&inner)),
            80..=89 if ctx.plain_unroll * 2 <= MAX_PLAIN_UNROLL && ctx.unroll * 2 <= MAX_UNROLL => {
                let room = (MAX_PLAIN_UNROLL / ctx.plain_unroll).min(MAX_UNROLL / ctx.unroll);
                let k = 1 + self.rng.below(room.min(4) as u64) as u32;
                let body_ctx = Ctx {
                    plain_unroll: ctx.plain_unroll * k,
                    unroll: ctx.unroll * k,
                    ..inner
                };
                Stmt::Repeat(k, Box::new(Stmt::Block(self.block(&body_ctx))))
            }
            90..=99 if ctx.unroll * 2 <= MAX_UNROLL => {
                let k = 1 + self.rng.below((MAX_UNROLL / ctx.unroll).min(4) as u64) as u32;
                let body_ctx = Ctx {
                    unroll: ctx.unroll * k,
                    ..inner
                };
                Stmt::StaticRepeat(k, Box::new(Stmt::Block(self.block(&body_ctx))))
            }
            _ => Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(ctx, 3)),
        }
    }
}

/// Adapters whose result accumulates over the calls (a count, a sum, a
/// fold, a collected vector), as opposed to those that stop at the first
/// call that decides (`any`, `position`...) or keep nothing (`for_each`).
fn accumulates(kind: AdapterKind) -> bool {
    matches!(
        kind,
        AdapterKind::Count | AdapterKind::Fold | AdapterKind::MapSum | AdapterKind::MapCollect
    )
}

/// The kinds of binding `Hidden` makes, by name: the immutable `let`s
/// (`Bind::Call` .. `Bind::Weight`, "slot" for `TakeSlot`), the values
/// handed on without one (`Bind::Pass`: "argument", "receiver", "arm" for
/// `match`, `if let` and `while let`), the structs (`Bind::Struct`,
/// `Bind::MutStruct`), and the twins of the last five known to be exact
/// ("typed_*": bound by `let k: i32` first; "hash_*": a `Hash` struct).
pub(crate) const BINDS: [&str; 17] = [
    "call",
    "bool",
    "tuple",
    "reset",
    "take",
    "slot",
    "weight",
    "argument",
    "receiver",
    "arm",
    "struct",
    "mut_struct",
    "typed_argument",
    "typed_receiver",
    "typed_arm",
    "hash_struct",
    "hash_mut_struct",
];

/// The kinds `AUGUR_FUZZ_BINDS` (names of [`BINDS`], separated by commas)
/// restricts `Hidden`'s bindings to, each as likely, to count what one
/// form finds and to check a twin known to be exact; `None` (unset): the
/// default mix.
pub(crate) fn bind_kinds() -> Option<Vec<&'static str>> {
    let v = std::env::var("AUGUR_FUZZ_BINDS").ok()?;
    let names = v.split(',').map(|n| {
        let n = n.trim();
        *BINDS
            .iter()
            .find(|b| **b == n)
            .unwrap_or_else(|| panic!("AUGUR_FUZZ_BINDS: {n:?} is not one of {BINDS:?}"))
    });
    Some(names.collect())
}

/// Whether the default mix makes the bindings that hand a chosen value on
/// without a `let` ("argument", "receiver", "arm", "struct",
/// "mut_struct"; the engine tracked none of them before values handed to
/// calls or matched were held, see `reproducers/hidden_forms.rs`), or only
/// their twins known to be exact. `AUGUR_FUZZ_UNTRACKED=1` makes them
/// (three times in four of their kind), `=0` not; the programs are the
/// same either way but for those bindings.
const UNTRACKED_BY_DEFAULT: bool = true;

/// Whether the mix makes the bindings that hand a chosen value on without
/// a `let` (`AUGUR_FUZZ_UNTRACKED`, else [`UNTRACKED_BY_DEFAULT`]).
pub(crate) fn untracked_forms() -> bool {
    match std::env::var("AUGUR_FUZZ_UNTRACKED").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => UNTRACKED_BY_DEFAULT,
    }
}

/// Whether programs may bind what dyn decisions chose with immutable
/// `let`s (`Hidden`): yes unless `AUGUR_FUZZ_HIDDEN=0` (the other programs
/// stay the same).
pub(crate) fn hidden_lets() -> bool {
    !matches!(std::env::var("AUGUR_FUZZ_HIDDEN").as_deref(), Ok("0"))
}

/// The program of seed `seed`.
pub(crate) fn generate(seed: u64) -> Program {
    let mut rng = Rng(seed);
    let all = [
        Field::Stack,
        Field::Slot,
        Field::Map,
        Field::Set,
        Field::Phase,
    ];
    let first = rng.below(5) as usize;
    let second = (first + 1 + rng.below(4) as usize) % 5;
    let period = 1 + rng.below(7) as i32;
    let mut g = Gen {
        rng,
        binds: bind_kinds(),
        untracked: untracked_forms(),
        fields: [all[first], all[second]],
        period,
        uncounted: false,
        stmts_left: MAX_STMTS,
        counters: 0,
    };
    let inits = (0..VARS)
        .map(|_| match g.rng.below(4) {
            0 | 1 => Init::Zero,
            2 => Init::Param(g.rng.below(2) as usize),
            _ => Init::Const(g.constant()),
        })
        .collect();
    // One program in three uses the plain-value statements and long plain
    // loops, which only the annotated walk extracts exactly.
    let plain_values = g.rng.chance(33);
    // Independently, one in three changes plain state through methods and
    // one in three hands deciding closures to adapters (both need the
    // attribute too): about half the programs keep only the shapes above.
    let methods = g.rng.chance(33);
    let adapters = g.rng.chance(33);
    // And, independently, one in three binds what dyn decisions chose
    // with immutable `let`s, read later (`Hidden`, which needs the
    // attribute too): about one program in five has none of these four,
    // and is walked under the trusted walk as well (three in ten before
    // `Hidden`).
    let hidden = g.rng.chance(33) && hidden_lets();
    let ctx = Ctx {
        depth: 1,
        counters: vec![],
        in_loop: false,
        loop_guarded: false,
        plain_values,
        methods,
        adapters,
        hidden,
        in_dyn_loop: false,
        reads_only: false,
        guarded: false,
        returns: true,
        plain_unroll: 1,
        unroll: 1,
    };
    let mut body = Vec::new();
    while g.stmts_left > 0 && body.len() < 6 {
        body.push(g.stmt(&ctx));
        if g.rng.chance(20) {
            break;
        }
    }
    Program {
        inits,
        counters: g.counters,
        body: Stmt::Block(body),
    }
}
