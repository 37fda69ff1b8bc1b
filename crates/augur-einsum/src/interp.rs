//! The runtime for augur's IR interpreter: einsum programs (CPU or
//! simulated GPU) run without a C compiler, with every memory access
//! checked (an index out of a tensor's bounds is an error naming the
//! allocation, not silent corruption) and every buffer accounted for.

use crate::runtime::Counters;
use augur::exec::Memory;
use augur::{Interpreter, Result, Value};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// An interpreter with the einsum runtime registered.
///
/// ```
/// use augur::{Builder, Dyn};
/// use augur_einsum::{Config, Einsum, SimInterpreter};
///
/// #[augur::staged]
/// fn twice() {
///     let ex = Builder::new()
///         .extract("twice", |x: Dyn<*mut i32>| {
///             let ein = Einsum::new(Config::default());
///             let i = ein.index("i");
///             let v = ein.tensor_on::<i32>("v", [3], x);
///             ein.run_on_gpu(|| v.at([i]).mul_by(2));
///             ein.finish();
///         })
///         .unwrap();
///     let mut it = SimInterpreter::new();
///     let x = it.interp.memory_mut().alloc_slice(&[1i32, 2, 3]);
///     ex.simulated().unwrap().interpret_in(&mut it.interp, &[x]).unwrap();
///     assert_eq!(it.interp.memory().read_slice::<i32>(x, 3).unwrap(), [2, 4, 6]);
///     assert_eq!(it.counters().moved(), 24); // v in and out
///     assert_eq!(it.live_buffers(), 0); // the device buffer was freed
/// }
/// # twice();
/// ```
pub struct SimInterpreter {
    /// The interpreter (its memory holds the caller's buffers too).
    pub interp: Interpreter,
    state: Rc<RefCell<State>>,
}

#[derive(Default)]
struct State {
    counters: Counters,
    /// Buffers the runtime allocated and has not freed.
    live: BTreeSet<u64>,
}

impl Default for SimInterpreter {
    fn default() -> Self {
        SimInterpreter::new()
    }
}

impl SimInterpreter {
    /// A fresh interpreter with the runtime registered and zero counters.
    pub fn new() -> SimInterpreter {
        let state = Rc::new(RefCell::new(State::default()));
        let mut interp = Interpreter::new();
        for (name, kind) in [
            ("augur_ein_host_alloc", Alloc::Host),
            ("augur_ein_scratch_alloc", Alloc::Host),
            ("augur_ein_device_alloc", Alloc::Device),
            ("augur_ein_unified_alloc", Alloc::Unified),
        ] {
            let s = state.clone();
            interp.register(name, move |m, a| alloc(&s, m, a, kind));
        }
        for name in [
            "augur_ein_host_free",
            "augur_ein_device_free",
            "augur_ein_unified_free",
        ] {
            let s = state.clone();
            interp.register(name, move |m, a| free(&s, m, a));
        }
        for (name, to_device) in [("augur_ein_to_device", true), ("augur_ein_to_host", false)] {
            let s = state.clone();
            interp.register(name, move |m, a| copy(&s, m, a, to_device));
        }
        let s = state.clone();
        interp.register("augur_ein_timer_stop", move |_, _| {
            s.borrow_mut().counters.timed += 1;
            Ok(Value::Void)
        });
        for name in ["augur_ein_timer_start", "augur_ein_sync"] {
            interp.register(name, |_, _| Ok(Value::Void));
        }
        SimInterpreter { interp, state }
    }

    /// What the runtime counted (times are not measured: always 0).
    pub fn counters(&self) -> Counters {
        self.state.borrow().counters
    }

    /// Buffers the runtime allocated and the program has not freed.
    pub fn live_buffers(&self) -> usize {
        self.state.borrow().live.len()
    }
}

#[derive(Clone, Copy)]
enum Alloc {
    Host,
    Device,
    Unified,
}

fn bytes(a: &[Value], i: usize, what: &str) -> Result<usize> {
    a.get(i)
        .and_then(Value::as_i64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| augur::Error::Interp {
            message: format!("{what}: argument {i} is not a size"),
        })
}

fn alloc(s: &RefCell<State>, m: &mut Memory, a: &[Value], kind: Alloc) -> Result<Value> {
    let n = bytes(a, 0, "augur_ein_*_alloc")?;
    // Poison, as the C runtime does: all bits set.
    let p = m.alloc_slice(&vec![0xffu8; n.max(1)]);
    let mut st = s.borrow_mut();
    match kind {
        Alloc::Host => {}
        Alloc::Device => {
            st.counters.device_bytes += n as i64;
            st.counters.device_allocs += 1;
        }
        Alloc::Unified => st.counters.unified_bytes += n as i64,
    }
    st.live.insert(p.as_ptr().unwrap_or(0));
    Ok(p)
}

fn free(s: &RefCell<State>, m: &mut Memory, a: &[Value]) -> Result<Value> {
    let p = a.first().copied().unwrap_or(Value::Void);
    if !s.borrow_mut().live.remove(&p.as_ptr().unwrap_or(0)) {
        return Err(augur::Error::Interp {
            message: format!("the einsum runtime frees {p:?}, which it did not allocate"),
        });
    }
    m.free(p)?;
    Ok(Value::Void)
}

fn copy(s: &RefCell<State>, m: &mut Memory, a: &[Value], to_device: bool) -> Result<Value> {
    let n = bytes(a, 2, "augur_ein_to_*")?;
    let data: Vec<u8> = m.read_slice(a[1], n)?;
    m.write_slice(a[0], &data)?;
    let mut st = s.borrow_mut();
    if to_device {
        st.counters.to_device += n as i64;
    } else {
        st.counters.to_host += n as i64;
    }
    Ok(Value::Void)
}
