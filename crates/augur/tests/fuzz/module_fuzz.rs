//! Random modules: families of staged functions specialised on a key,
//! calling each other, directly or through a function pointer (at their
//! own key: recursion and mutual recursion bounded by a dyn fuel argument;
//! at smaller keys: specialisation), each call logged through a pointer all
//! functions share. Every module runs in
//! the interpreter, compiled by the C compiler and by the JIT, and is
//! compared with a plain-Rust model of the same program: results and the
//! log of calls, in order.
//!
//! `AUGUR_MODULE_CASES` (default 60, 25 in debug builds) and
//! `AUGUR_MODULE_SEED` run more.

use crate::fuzz_env;

use augur::exec::{Backend, CompileOptions};
use augur::{Builder, Dyn, Func, Interpreter, Module, Value};
use augur_rng::Rng;
use std::rc::Rc;

/// Families per module and keys per family (0 ..= MAX_KEY).
const FAMILIES: usize = 3;
const MAX_KEY: u8 = 3;
/// The largest fuel an input has: calls nest at most this deep.
const MAX_FUEL: i32 = 5;
/// Entries of the log: its length, then one tag per call (a body makes at
/// most two calls, so 2^(MAX_FUEL + 1) bodies run at most).
const LOG: usize = 1 + (1 << (MAX_FUEL + 1));

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Xor,
    And,
}

#[derive(Clone, Debug)]
enum E {
    Fuel,
    X,
    R,
    Lit(i32),
    Bin(Op, Box<E>, Box<E>),
    /// `fam.at(key).call(fuel - 1, arg, log)`.
    Call(usize, u8, Box<E>),
    /// The same call through a function pointer held in a variable.
    CallPtr(usize, u8, Box<E>),
}

/// The body of one function (a family at a key):
/// ```text
/// log[++log[0]] = tag;
/// r = init;
/// if (fuel > 0) { if (cond & 1) { r = then_[0]; r = then_[1]; ... } else { r = else_; } }
/// return r ^ x;
/// ```
/// Calls appear only in `then_`, where the fuel is positive.
#[derive(Clone, Debug)]
struct Body {
    init: E,
    cond: E,
    then_: Vec<E>,
    else_: E,
}

type Specs = Vec<Vec<Body>>;

#[augur::staged]
fn expr(rng: &mut Rng, depth: u32, calls: &mut u32, key: u8) -> E {
    let leaf = depth == 0 || rng.chance(30);
    if leaf {
        return match rng.below(4) {
            0 => E::Fuel,
            1 => E::X,
            2 => E::R,
            _ => E::Lit(rng.below(200) as i32 - 100),
        };
    }
    if *calls > 0 && rng.chance(30) {
        *calls -= 1;
        let fam = rng.below(FAMILIES as u64) as usize;
        let to = rng.below(u64::from(key) + 1) as u8;
        let arg = Box::new(expr(rng, depth - 1, calls, key));
        return if rng.chance(50) {
            E::Call(fam, to, arg)
        } else {
            E::CallPtr(fam, to, arg)
        };
    }
    let op = rng.pick(&[Op::Add, Op::Sub, Op::Mul, Op::Xor, Op::And]);
    let a = expr(rng, depth - 1, calls, key);
    let b = expr(rng, depth - 1, calls, key);
    E::Bin(op, Box::new(a), Box::new(b))
}

#[augur::staged]
fn body(rng: &mut Rng, key: u8) -> Body {
    let mut none = 0;
    let mut calls = 2;
    let then_ = (0..1 + rng.below(3))
        .map(|_| expr(rng, 3, &mut calls, key))
        .collect();
    Body {
        init: expr(rng, 2, &mut none, key),
        cond: expr(rng, 2, &mut none, key),
        then_,
        else_: expr(rng, 2, &mut none, key),
    }
}

#[augur::staged]
fn specs(rng: &mut Rng) -> Specs {
    (0..FAMILIES)
        .map(|_| (0..=MAX_KEY).map(|k| body(rng, k)).collect())
        .collect()
}

#[augur::staged]
fn tag(fam: usize, key: u8) -> i32 {
    (fam as i32) * 16 + i32::from(key) + 1
}

// ----- the model -----

struct Model<'a> {
    specs: &'a Specs,
    log: Vec<i32>,
}

impl Model<'_> {
    #[augur::staged]
    fn call(&mut self, fam: usize, key: u8, fuel: i32, x: i32) -> i32 {
        self.log.push(tag(fam, key));
        let b = &self.specs[fam][usize::from(key)];
        let mut r = self.eval(&b.init, fuel, x, 0);
        if fuel > 0 {
            if self.eval(&b.cond, fuel, x, r) & 1 != 0 {
                for e in &b.then_ {
                    r = self.eval(e, fuel, x, r);
                }
            } else {
                r = self.eval(&b.else_, fuel, x, r);
            }
        }
        r ^ x
    }

    #[augur::staged]
    fn eval(&mut self, e: &E, fuel: i32, x: i32, r: i32) -> i32 {
        match e {
            E::Fuel => fuel,
            E::X => x,
            E::R => r,
            E::Lit(c) => *c,
            E::Bin(op, a, b) => {
                let a = self.eval(a, fuel, x, r);
                let b = self.eval(b, fuel, x, r);
                match op {
                    Op::Add => a.wrapping_add(b),
                    Op::Sub => a.wrapping_sub(b),
                    Op::Mul => a.wrapping_mul(b),
                    Op::Xor => a ^ b,
                    Op::And => a & b,
                }
            }
            E::Call(fam, key, arg) | E::CallPtr(fam, key, arg) => {
                let arg = self.eval(arg, fuel, x, r);
                self.call(*fam, *key, fuel - 1, arg)
            }
        }
    }
}

// ----- the staged program -----

type Fam = Func<fn(i32, i32, *mut i32) -> i32, u8>;

struct Stage<'a> {
    fams: &'a [Fam],
    fuel: Dyn<i32>,
    x: Dyn<i32>,
    log: Dyn<*mut i32>,
}

impl Stage<'_> {
    #[augur::staged]
    fn eval(&self, e: &E, r: Dyn<i32>) -> Dyn<i32> {
        match e {
            E::Fuel => self.fuel + 0,
            E::X => self.x + 0,
            E::R => r + 0,
            E::Lit(c) => Dyn::lit(*c),
            E::Bin(op, a, b) => {
                let a = self.eval(a, r);
                let b = self.eval(b, r);
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Xor => a ^ b,
                    Op::And => a & b,
                }
            }
            E::Call(fam, key, arg) => {
                let arg = self.eval(arg, r);
                self.fams[*fam].at(*key).call(self.fuel - 1, arg, self.log)
            }
            E::CallPtr(fam, key, arg) => {
                let arg = self.eval(arg, r);
                let p = Dyn::new(self.fams[*fam].at(*key).addr());
                p.call(self.fuel - 1, arg, self.log)
            }
        }
    }

    #[augur::staged]
    fn body(&self, b: &Body, t: i32) -> Dyn<i32> {
        let n = self.log.at(0);
        self.log.at(n + 1).set(t);
        self.log.at(0).set(n + 1);
        let r = Dyn::new(self.eval(&b.init, Dyn::lit(0)));
        if self.fuel.gt(0).is_true() {
            if (self.eval(&b.cond, r) & 1).ne(0).is_true() {
                for e in &b.then_ {
                    r.set(self.eval(e, r));
                }
            } else {
                r.set(self.eval(&b.else_, r));
            }
        }
        r ^ self.x
    }
}

#[augur::staged]
fn module(specs: &Rc<Specs>) -> (Module<'static>, Vec<Fam>) {
    let mut m = Builder::new().module();
    let fams: Vec<Fam> = (0..FAMILIES)
        .map(|i| m.declare_keyed(&format!("f{i}")))
        .collect();
    for (i, &f) in fams.iter().enumerate() {
        let (specs, all) = (Rc::clone(specs), fams.clone());
        m.define_keyed(
            f,
            move |k: u8, fuel: Dyn<i32>, x: Dyn<i32>, log: Dyn<*mut i32>| {
                let stage = Stage {
                    fams: &all,
                    fuel,
                    x,
                    log,
                };
                stage.body(&specs[i][usize::from(k)], tag(i, k))
            },
        );
    }
    m.export(fams[0].at(MAX_KEY));
    (m, fams)
}

#[test]
#[augur::staged]
fn random_modules_run_as_their_rust_model() {
    let count = fuzz_env::cases("AUGUR_MODULE_CASES") as usize;
    let seed = fuzz_env::seed("AUGUR_MODULE_SEED", 0x05ee_d0f0_d01e);
    let mut rng = Rng(seed);
    // Random bodies compute values nothing uses, which gcc warns of.
    let mut c_opts = CompileOptions::default().with_backend(Backend::C);
    c_opts.flags.retain(|f| f != "-Werror");
    let jit_opts = CompileOptions::default().with_backend(Backend::Jit);
    let mut functions = 0;
    for case in 0..count {
        let specs = Rc::new(specs(&mut rng));
        let (m, fams) = module(&specs);
        let ex = m
            .extract()
            .unwrap_or_else(|e| panic!("case {case}: {e}\n{specs:#?}"));
        assert_eq!(
            ex.c_code(),
            module(&specs).0.extract().unwrap().c_code(),
            "case {case}"
        );
        functions += ex.functions().count();
        let libs = [
            ex.compile_with(&c_opts).unwrap(),
            ex.compile_with(&jit_opts).unwrap(),
        ];
        let root = fams[0].at(MAX_KEY);
        for fuel in 0..=MAX_FUEL {
            for x in [0, 7, -13, i32::MAX] {
                let mut model = Model {
                    specs: &specs,
                    log: Vec::new(),
                };
                let want = model.call(0, MAX_KEY, fuel, x);
                let mut want_log = vec![model.log.len() as i32];
                want_log.extend(&model.log);
                want_log.resize(LOG, 0);
                let what = || format!("case {case}, fuel {fuel}, x {x}:\n{}", ex.c_code());
                let mut it = Interpreter::new();
                let log = it.memory_mut().alloc_slice(&[0i32; LOG]);
                let args = [Value::from(fuel), Value::from(x), log];
                let got = ex.interpret_in(&mut it, root.clone(), &args);
                assert_eq!(
                    got.unwrap_or_else(|e| panic!("{e}: {}", what())),
                    want.into(),
                    "{}",
                    what()
                );
                assert_eq!(
                    it.memory().read_slice::<i32>(log, LOG).unwrap(),
                    want_log,
                    "{}",
                    what()
                );
                for lib in &libs {
                    let mut buf = [0i32; LOG];
                    // SAFETY: every function is `int32_t f(int32_t, int32_t,
                    // int32_t *)` and writes at most `LOG` ints at its pointer.
                    let got = unsafe { lib.get(root.clone()).unwrap()(fuel, x, buf.as_mut_ptr()) };
                    assert_eq!(
                        (got, &buf[..]),
                        (want, &want_log[..]),
                        "{:?} {}",
                        lib.backend(),
                        what()
                    );
                }
            }
        }
    }
    // The generator does reach many functions per module.
    assert!(
        functions >= count * 3,
        "{functions} functions in {count} modules"
    );
}
