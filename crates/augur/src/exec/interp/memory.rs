//! The interpreter's memory: a safe model of C objects, no host pointers.
//!
//! Every object (a `malloc` block, a local array, an address-taken variable,
//! a string literal, a buffer the host made) is one allocation: a `Vec<u8>`
//! named by an id. A pointer is `((id + 1) << 32) | offset`, null is 0.
//! Pointer arithmetic changes only the offset, which is a signed 32-bit
//! number, so a pointer one before an array stays in its allocation; bounds,
//! liveness and initialisation are checked at each access, which is where C
//! would silently read garbage.

use super::races::Races;
use super::value::{elem_size, Elem, Value};
use crate::ir::{Scalar, Type};
use crate::{Error, Result};
use std::cell::RefCell;
use std::collections::HashMap;

/// Largest allocation: offsets must fit the signed 32-bit offset field.
const MAX_ALLOC: u64 = i32::MAX as u64;

/// Default cap on the bytes all allocations hold together.
const DEFAULT_LIMIT: u64 = 2 << 30;

/// Where an allocation came from; it says what may be freed and names the
/// object in error messages.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Origin {
    /// Made by the host through [`Memory::alloc`] and friends.
    Host,
    /// `malloc` or `calloc`.
    Malloc,
    /// The storage of a local variable (an array or an address-taken scalar).
    Local(String),
    /// A string literal (read-only).
    Literal,
    /// What a function pointer points to: no bytes, only the function's name.
    Function(String),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Live,
    Freed,
    /// A local whose block has ended; its bytes are kept so that the next
    /// execution of the declaration can reuse the allocation.
    OutOfScope,
}

struct Alloc {
    bytes: Vec<u8>,
    /// Which bytes have been written; `None` once all of them have.
    init: Option<Vec<bool>>,
    /// Number of `false` entries in `init`.
    uninit: usize,
    /// Size in bytes (kept after the bytes are dropped, for messages).
    size: u64,
    state: State,
    origin: Origin,
}

impl Alloc {
    fn describe(&self) -> String {
        match &self.origin {
            Origin::Host => "host buffer".into(),
            Origin::Malloc => "malloc".into(),
            Origin::Local(name) => format!("local `{name}`"),
            Origin::Literal => "string literal".into(),
            Origin::Function(name) => format!("function `{name}`"),
        }
    }

    fn mark_init(&mut self, off: usize, n: usize) {
        if let Some(init) = &mut self.init {
            for b in &mut init[off..off + n] {
                if !*b {
                    *b = true;
                    self.uninit -= 1;
                }
            }
            if self.uninit == 0 {
                self.init = None;
            }
        }
    }

    /// Sets which of the bytes from `off` on are initialised.
    fn set_init(&mut self, off: usize, init: &[bool]) {
        if self.init.is_none() && init.iter().all(|&b| b) {
            return;
        }
        let mut flags = self
            .init
            .take()
            .unwrap_or_else(|| vec![true; self.bytes.len()]);
        flags[off..off + init.len()].copy_from_slice(init);
        self.uninit = flags.iter().filter(|b| !**b).count();
        self.init = (self.uninit > 0).then_some(flags);
    }

    fn is_init(&self, off: usize, n: usize) -> bool {
        match &self.init {
            None => true,
            Some(init) => init[off..off + n].iter().all(|&b| b),
        }
    }
}

/// The interpreter's memory: a safe model of C objects.
///
/// Each object (a `malloc` block, a local array or address-taken variable,
/// a string literal, a host buffer) is one allocation; a pointer is
/// `((id + 1) << 32) | offset` with null 0, the offset a signed 32-bit
/// number. Every access is checked for bounds, liveness (freed blocks,
/// locals whose block ended) and initialisation; values are little-endian
/// and pointers take 8 bytes.
pub struct Memory {
    allocs: Vec<Alloc>,
    /// Bytes held by all allocations.
    held: u64,
    limit: u64,
    /// String literals by content, so that each is allocated once.
    literals: HashMap<String, u64>,
    /// Function pointers by the function's name.
    functions: HashMap<String, u64>,
    /// The log of the `omp parallel for` loop running, if any (a cell:
    /// reads log too).
    races: RefCell<Option<Races>>,
    /// The last epoch a finished log used (see [`Races`]).
    last_epoch: u32,
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            allocs: Vec::new(),
            held: 0,
            limit: DEFAULT_LIMIT,
            literals: HashMap::new(),
            functions: HashMap::new(),
            races: RefCell::new(None),
            last_epoch: 0,
        }
    }
}

impl std::fmt::Debug for Memory {
    /// A summary: the bytes themselves would flood test output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self
            .allocs
            .iter()
            .filter(|a| a.state == State::Live)
            .count();
        f.debug_struct("Memory")
            .field("allocations", &self.allocs.len())
            .field("live", &live)
            .field("bytes_held", &self.held)
            .finish_non_exhaustive()
    }
}

fn interp_err(message: String) -> Error {
    Error::Interp { message }
}

fn ptr_of(v: Value, what: &str) -> Result<u64> {
    v.as_ptr()
        .ok_or_else(|| interp_err(format!("{what} expects a pointer, got {v}")))
}

/// The offset field of a pointer, as the signed number it stands for.
pub(super) fn offset_of(p: u64) -> i64 {
    p as u32 as i32 as i64
}

/// `p` moved by `delta` bytes. Fails only when the offset would leave the
/// signed 32-bit range (far outside any allocation: C undefined behaviour).
pub(super) fn ptr_add(p: u64, delta: i64) -> Result<u64> {
    let off = offset_of(p) + delta;
    if off < i32::MIN as i64 || off > i32::MAX as i64 {
        return Err(interp_err(format!(
            "pointer arithmetic moves {p:#x} by {delta} bytes, far outside its allocation"
        )));
    }
    Ok((p & !0xffff_ffff) | (off as i32 as u32 as u64))
}

/// The allocation bits of a pointer (zero for null and for small integers).
pub(super) fn base_of(p: u64) -> u64 {
    p >> 32
}

impl Memory {
    /// An empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Caps the bytes that all allocations may hold together (default 2 GiB);
    /// an allocation past it is an error.
    pub fn set_limit(&mut self, bytes: u64) {
        self.limit = bytes;
    }

    /// A zero-filled buffer of `size` bytes owned by the host; it stays live
    /// until [`free`](Memory::free)d.
    ///
    /// # Panics
    /// If `size` exceeds 2 GiB − 1 or the memory limit.
    pub fn alloc(&mut self, size: usize) -> Value {
        match self.new_alloc(size as u64, Origin::Host, true) {
            Ok(p) => Value::Ptr(p),
            Err(e) => panic!("{e}"),
        }
    }

    /// A new host buffer holding `data` (numbers, pointers, structs: any
    /// [`Elem`]); see [`alloc`](Memory::alloc).
    /// A struct's padding stays uninitialised (reading it is an error, as
    /// its bytes are indeterminate in C); every other byte is written.
    ///
    /// # Panics
    /// As [`alloc`](Memory::alloc), and for a [`Value`] that is not a
    /// pointer.
    pub fn alloc_slice<T: Elem>(&mut self, data: &[T]) -> Value {
        let size = data.len() as u64 * elem_size::<T>();
        let p = match self.new_alloc(size, Origin::Host, false) {
            Ok(p) => Value::Ptr(p),
            Err(e) => panic!("{e}"),
        };
        if let Err(e) = self.write_slice(p, data) {
            panic!("{e}");
        }
        p
    }

    /// A new host buffer holding `s` and a terminating NUL, for `char *`
    /// arguments; see [`alloc`](Memory::alloc).
    pub fn alloc_cstr(&mut self, s: &str) -> Value {
        let mut bytes: Vec<u8> = s.bytes().collect();
        bytes.push(0);
        self.alloc_slice(&bytes)
    }

    /// Reads `n` elements of type `T` starting at `ptr`.
    pub fn read_slice<T: Elem>(&self, ptr: Value, n: usize) -> Result<Vec<T>> {
        let p = ptr_of(ptr, "read_slice")?;
        let size = elem_size::<T>() as i64;
        (0..n)
            .map(|i| T::load(self, Value::Ptr(ptr_add(p, i as i64 * size)?)))
            .collect()
    }

    /// Writes `data` to consecutive elements starting at `ptr`.
    pub fn write_slice<T: Elem>(&mut self, ptr: Value, data: &[T]) -> Result<()> {
        let p = ptr_of(ptr, "write_slice")?;
        let size = elem_size::<T>() as i64;
        for (i, x) in data.iter().enumerate() {
            x.store(self, Value::Ptr(ptr_add(p, i as i64 * size)?))?;
        }
        Ok(())
    }

    /// The bytes of the NUL-terminated string at `ptr`, without the NUL.
    pub fn read_cstr(&self, ptr: Value) -> Result<Vec<u8>> {
        self.read_cstr_at(ptr_of(ptr, "read_cstr")?, usize::MAX)
    }

    /// Loads a value of type `ty` (a scalar or a pointer) from `ptr`.
    pub fn load(&self, ptr: Value, ty: &Type) -> Result<Value> {
        self.load_at(ptr_of(ptr, "load")?, ty)
    }

    /// Stores `v` at `ptr`, in `v`'s own size.
    pub fn store(&mut self, ptr: Value, v: Value) -> Result<()> {
        self.store_at(ptr_of(ptr, "store")?, v)
    }

    /// Frees a block made by `malloc`/`calloc` or by the host. Freeing null
    /// does nothing; freeing twice, freeing a local or literal, or freeing a
    /// pointer into the middle of a block is an error.
    pub fn free(&mut self, ptr: Value) -> Result<()> {
        let p = ptr_of(ptr, "free")?;
        if p == 0 {
            return Ok(());
        }
        let id = self.id_of(p).ok_or_else(|| {
            interp_err(format!("free of {p:#x}, which is not a pointer to a block"))
        })?;
        let a = &self.allocs[id];
        let problem = match (&a.state, &a.origin) {
            (State::Freed, _) => Some("which was already freed"),
            (_, Origin::Local(_) | Origin::Literal) => Some("which was not allocated by malloc"),
            _ if offset_of(p) != 0 => Some("a pointer into the middle of the block"),
            _ => None,
        };
        if let Some(problem) = problem {
            return Err(interp_err(format!(
                "free of allocation {id} ({}), {problem}",
                a.describe()
            )));
        }
        self.release(id, State::Freed);
        Ok(())
    }

    /// The size in bytes of the allocation `ptr` points into, if it is live.
    pub fn allocation_size(&self, ptr: Value) -> Option<u64> {
        let id = self.id_of(ptr.as_ptr()?)?;
        let a = &self.allocs[id];
        (a.state == State::Live).then_some(a.size)
    }

    /// Number of `malloc`/`calloc` blocks not yet freed (for leak checks).
    pub fn live_heap_blocks(&self) -> usize {
        self.allocs
            .iter()
            .filter(|a| a.state == State::Live && a.origin == Origin::Malloc)
            .count()
    }

    // ---- crate-internal operations used by the evaluator and built-ins ----

    /// A new allocation, zero-filled and initialised or (for `malloc` and
    /// locals) uninitialised.
    pub(super) fn new_alloc(&mut self, size: u64, origin: Origin, zeroed: bool) -> Result<u64> {
        self.reserve(size)?;
        let id = self.allocs.len();
        if id as u64 >= u32::MAX as u64 {
            return Err(interp_err("more than 2^32 allocations".into()));
        }
        let n = size as usize;
        self.allocs.push(Alloc {
            bytes: vec![0; n],
            init: (!zeroed && n > 0).then(|| vec![false; n]),
            uninit: if zeroed { 0 } else { n },
            size,
            state: State::Live,
            origin,
        });
        if let Some(r) = self.races.get_mut() {
            r.made(id);
        }
        Ok((id as u64 + 1) << 32)
    }

    fn reserve(&mut self, size: u64) -> Result<()> {
        if size > MAX_ALLOC || self.held + size > self.limit {
            return Err(interp_err(format!(
                "allocation of {size} bytes exceeds the interpreter's memory limit \
                 ({} bytes held, limit {})",
                self.held, self.limit
            )));
        }
        self.held += size;
        Ok(())
    }

    /// Makes the out-of-scope local `p` live again with `size` uninitialised
    /// bytes (a declaration executed again, e.g. in the next loop iteration).
    pub(super) fn revive(&mut self, p: u64, size: u64) -> Result<()> {
        let id = self.id_of(p).expect("a local's own allocation");
        let old = self.allocs[id].bytes.len() as u64;
        self.held -= old;
        self.reserve(size)?;
        let a = &mut self.allocs[id];
        let n = size as usize;
        a.bytes.resize(n, 0);
        a.init = (n > 0).then(|| vec![false; n]);
        a.uninit = n;
        a.size = size;
        a.state = State::Live;
        if let Some(r) = self.races.get_mut() {
            r.made(id);
        }
        Ok(())
    }

    /// Ends the scope of the local `p`: accesses fail until it is revived.
    pub(super) fn end_scope(&mut self, p: u64) {
        let id = self.id_of(p).expect("a local's own allocation");
        self.allocs[id].state = State::OutOfScope;
    }

    /// Ends the local `p` for good (its function returned), dropping its bytes.
    pub(super) fn drop_local(&mut self, p: u64) {
        let id = self.id_of(p).expect("a local's own allocation");
        self.release(id, State::OutOfScope);
    }

    fn release(&mut self, id: usize, state: State) {
        let a = &mut self.allocs[id];
        self.held -= a.bytes.len() as u64;
        a.bytes = Vec::new();
        a.init = None;
        a.uninit = 0;
        a.state = state;
    }

    /// The read-only, NUL-terminated storage of a string literal.
    pub(super) fn literal(&mut self, s: &str) -> Result<u64> {
        if let Some(&p) = self.literals.get(s) {
            return Ok(p);
        }
        let p = self.new_alloc(s.len() as u64 + 1, Origin::Literal, true)?;
        let id = self.id_of(p).expect("just made");
        self.allocs[id].bytes[..s.len()].copy_from_slice(s.as_bytes());
        self.literals.insert(s.to_string(), p);
        Ok(p)
    }

    /// A pointer to the function called `name` (a function of the module,
    /// a registered extern or a built-in), as interpreted code that takes
    /// its address gets one: pass it where a function pointer is expected.
    /// It points to no bytes (reading through it is an error); calls
    /// through it call `name`.
    ///
    /// ```
    /// use augur::exec::{Interpreter, Value};
    /// let apply = augur::ir::parse(
    ///     "fn apply(f: fn(f64) -> f64, x: f64) -> f64 {
    ///        return (f)(x) + 1.0;
    ///      }",
    /// )?;
    /// let mut it = Interpreter::new();
    /// let sqrt = it.memory_mut().function_ptr("sqrt");
    /// assert_eq!(it.call(&apply, &[sqrt, Value::F64(9.0)])?, Value::F64(4.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn function_ptr(&mut self, name: &str) -> Value {
        if let Some(&p) = self.functions.get(name) {
            return Value::Ptr(p);
        }
        let p = self
            .new_alloc(0, Origin::Function(name.to_string()), true)
            .expect("an empty allocation fits");
        self.functions.insert(name.to_string(), p);
        Value::Ptr(p)
    }

    /// The function `p` points to, if it is a function pointer.
    pub(super) fn function_at(&self, p: u64) -> Option<&str> {
        let a = &self.allocs[self.id_of(p)?];
        match &a.origin {
            Origin::Function(name) if offset_of(p) == 0 => Some(name),
            _ => None,
        }
    }

    fn id_of(&self, p: u64) -> Option<usize> {
        let id = base_of(p).checked_sub(1)? as usize;
        (id < self.allocs.len()).then_some(id)
    }

    /// Checks that `n` bytes at `p` lie in a live allocation; gives the
    /// allocation index and the offset. `what` names the access ("load").
    fn locate(&self, p: u64, n: u64, what: &str) -> Result<(usize, usize)> {
        if let Some(id) = self.id_of(p) {
            let a = &self.allocs[id];
            let off = offset_of(p);
            if a.state == State::Live && off >= 0 && off as u64 + n <= a.size {
                return Ok((id, off as usize));
            }
        }
        Err(self.access_error(p, n, what))
    }

    #[cold]
    fn access_error(&self, p: u64, n: u64, what: &str) -> Error {
        let off = offset_of(p);
        let message = match self.id_of(p) {
            None if base_of(p) == 0 => format!("{what} of {n} bytes through a null pointer"),
            None => format!("{what} of {n} bytes through an invalid pointer {p:#x}"),
            Some(id) => {
                let a = &self.allocs[id];
                let head = format!("{what} of {n} bytes at offset {off} of allocation {id}");
                match a.state {
                    State::Freed => format!("{head} ({}), which was freed", a.describe()),
                    State::OutOfScope => format!(
                        "{head} ({}), which is out of scope (its block has ended)",
                        a.describe()
                    ),
                    State::Live => format!("{head} (size {}, {})", a.size, a.describe()),
                }
            }
        };
        interp_err(message)
    }

    /// Starts (with `Some`) or ends the data-race log of an `omp parallel
    /// for` loop; gives the one that was running.
    pub(super) fn set_races(&mut self, races: Option<Races>) -> Option<Races> {
        std::mem::replace(self.races.get_mut(), races)
    }

    /// The epoch after which a new log numbers its iterations.
    pub(super) fn last_epoch(&self) -> u32 {
        self.last_epoch
    }

    /// Records the last epoch a finished log used.
    pub(super) fn end_epochs(&mut self, epoch: u32) {
        self.last_epoch = epoch;
    }

    /// The running data-race log, if any.
    pub(super) fn races(&mut self) -> Option<&mut Races> {
        self.races.get_mut().as_mut()
    }

    /// Logs an access for the data-race check, when a loop is checked.
    fn log(&self, id: usize, off: usize, n: u64, write: bool) -> Result<()> {
        match self.races.borrow_mut().as_mut() {
            None => Ok(()),
            Some(r) => r.touch(
                id,
                self.allocs[id].size as usize,
                off,
                n as usize,
                write,
                || format!("allocation {id} ({})", self.allocs[id].describe()),
            ),
        }
    }

    /// The initialised bytes `p..p+n`.
    pub(super) fn read(&self, p: u64, n: u64, what: &str) -> Result<&[u8]> {
        let (id, off) = self.locate(p, n, what)?;
        self.log(id, off, n, false)?;
        let a = &self.allocs[id];
        let n = n as usize;
        if !a.is_init(off, n) {
            return Err(interp_err(format!(
                "{what} of {n} bytes at offset {off} of allocation {id} ({}) reads \
                 uninitialized memory",
                a.describe()
            )));
        }
        Ok(&a.bytes[off..off + n])
    }

    /// The writable bytes `p..p+n`, marked initialised.
    pub(super) fn write(&mut self, p: u64, n: u64, what: &str) -> Result<&mut [u8]> {
        let (id, off) = self.locate(p, n, what)?;
        self.log(id, off, n, true)?;
        let a = &mut self.allocs[id];
        if a.origin == Origin::Literal {
            return Err(interp_err(format!(
                "{what} of {n} bytes into a string literal (allocation {id})"
            )));
        }
        let n = n as usize;
        a.mark_init(off, n);
        Ok(&mut a.bytes[off..off + n])
    }

    /// True when `n` bytes at `p` are in bounds but not all initialised (to
    /// tell an uninitialised read apart from other faults).
    pub(super) fn is_uninit(&self, p: u64, n: u64) -> bool {
        self.locate(p, n, "")
            .is_ok_and(|(id, off)| !self.allocs[id].is_init(off, n as usize))
    }

    pub(super) fn load_scalar(&self, p: u64, s: Scalar) -> Result<Value> {
        let n = s.size();
        let bytes = self.read(p, n, "load")?;
        Value::decode(s, bytes).ok_or_else(|| {
            interp_err(format!(
                "load of a bool at {p:#x} found the byte {}, which is not 0 or 1",
                bytes[0]
            ))
        })
    }

    pub(super) fn load_at(&self, p: u64, ty: &Type) -> Result<Value> {
        match ty {
            Type::Scalar(s) => self.load_scalar(p, *s),
            Type::Ptr { .. } | Type::FnPtr(_) => {
                let b = self.read(p, 8, "load")?;
                Ok(Value::Ptr(u64::from_le_bytes(
                    b.try_into().expect("8 bytes"),
                )))
            }
            _ => Err(interp_err(format!("load of a value of type {ty}"))),
        }
    }

    pub(super) fn store_at(&mut self, p: u64, v: Value) -> Result<()> {
        let (bytes, n) = v.encode();
        self.write(p, n as u64, "store")?
            .copy_from_slice(&bytes[..n]);
        Ok(())
    }

    /// Bytes of the NUL-terminated string at `p`, at most `max` of them
    /// (then no NUL is needed, as for `%.3s`).
    pub(super) fn read_cstr_at(&self, p: u64, max: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut q = p;
        while out.len() < max {
            let b = self.read(q, 1, "string read")?[0];
            if b == 0 {
                break;
            }
            out.push(b);
            q = ptr_add(q, 1)?;
        }
        Ok(out)
    }

    /// `memcpy`: copies `n` bytes, keeping which are initialised; the
    /// regions must not overlap (as in C).
    pub(super) fn copy(&mut self, dst: u64, src: u64, n: u64) -> Result<()> {
        self.copy_bytes(dst, src, n, "memcpy", false)
    }

    /// `memmove`: [`copy`](Memory::copy), the regions may overlap.
    pub(super) fn move_bytes(&mut self, dst: u64, src: u64, n: u64) -> Result<()> {
        self.copy_bytes(dst, src, n, "memmove", true)
    }

    /// Copies `n` bytes from `src` to `dst` as `func` does, keeping which
    /// are initialised; overlapping regions are an error unless `overlap`.
    fn copy_bytes(&mut self, dst: u64, src: u64, n: u64, func: &str, overlap: bool) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let (sid, soff) = self.locate(src, n, &format!("{func} read"))?;
        let (did, doff) = self.locate(dst, n, &format!("{func} write"))?;
        self.log(sid, soff, n, false)?;
        if !overlap && sid == did && soff.abs_diff(doff) < n as usize {
            return Err(interp_err(format!(
                "{func} of {n} bytes between overlapping regions of allocation {sid} \
                 (offsets {soff} and {doff}); use memmove"
            )));
        }
        let n = n as usize;
        let data = self.allocs[sid].bytes[soff..soff + n].to_vec();
        let init: Option<Vec<bool>> = self.allocs[sid]
            .init
            .as_ref()
            .map(|i| i[soff..soff + n].to_vec());
        self.write(dst, n as u64, &format!("{func} write"))?
            .copy_from_slice(&data);
        if let Some(init) = init {
            // Uninitialised source bytes stay uninitialised at the destination.
            self.allocs[did].set_init(doff, &init);
        }
        Ok(())
    }

    /// `memcmp`: the difference of the first bytes (unsigned) that differ
    /// in the `n` bytes at `a` and at `b`, or 0. All `n` bytes of both
    /// must be readable and initialised.
    pub(super) fn compare(&self, a: u64, b: u64, n: u64) -> Result<i32> {
        if n == 0 {
            return Ok(0);
        }
        let x = self.read(a, n, "memcmp read")?;
        let y = self.read(b, n, "memcmp read")?;
        Ok(x.iter()
            .zip(y)
            .find(|(x, y)| x != y)
            .map_or(0, |(&x, &y)| x as i32 - y as i32))
    }

    /// The byte at `q` of the string that starts at `start`, read for
    /// `func`; an allocation that ends before a NUL is reported as such.
    pub(super) fn string_byte(&self, start: u64, q: u64, func: &str) -> Result<u8> {
        match self.read(q, 1, &format!("{func} read")) {
            Ok(b) => Ok(b[0]),
            Err(e) => {
                let Some(id) = self.id_of(q) else {
                    return Err(e);
                };
                let a = &self.allocs[id];
                let ends = a.state == State::Live && offset_of(q) == a.size as i64;
                if !ends || base_of(start) != base_of(q) || offset_of(start) < 0 {
                    return Err(e);
                }
                Err(interp_err(format!(
                    "{func} of a string with no NUL: it starts at offset {} of allocation {id} \
                     ({}, size {}), which ends before a NUL",
                    offset_of(start),
                    a.describe(),
                    a.size
                )))
            }
        }
    }

    /// `realloc`: a new `malloc` block of `size` bytes holding the first
    /// bytes of the block at `p` (which is freed), or a new block for
    /// null. Always moves, so stale pointers to the old block fail.
    pub(super) fn realloc(&mut self, p: u64, size: u64) -> Result<u64> {
        if p == 0 {
            return self.new_alloc(size, Origin::Malloc, false);
        }
        let id = self.id_of(p).ok_or_else(|| {
            interp_err(format!(
                "realloc of {p:#x}, which is not a pointer to a block"
            ))
        })?;
        let a = &self.allocs[id];
        let problem = match (&a.state, &a.origin) {
            (State::Freed, _) => Some("which was already freed"),
            (_, Origin::Host) => Some("which the host made (Memory::alloc), not malloc"),
            (_, Origin::Malloc) if offset_of(p) != 0 => {
                Some("a pointer into the middle of the block")
            }
            (_, Origin::Malloc) if size == 0 => Some(
                "to 0 bytes, which C17 leaves to the implementation and C23 undefined \
                 (free the block instead)",
            ),
            (_, Origin::Malloc) => None,
            _ => Some("which was not allocated by malloc"),
        };
        if let Some(problem) = problem {
            return Err(interp_err(format!(
                "realloc of allocation {id} ({}), {problem}",
                a.describe()
            )));
        }
        let q = self.new_alloc(size, Origin::Malloc, false)?;
        let new = self.id_of(q).expect("just made");
        let keep = (self.allocs[id].size.min(size)) as usize;
        let (bytes, init) = {
            let old = &self.allocs[id];
            (
                old.bytes[..keep].to_vec(),
                old.init.as_ref().map(|i| i[..keep].to_vec()),
            )
        };
        let b = &mut self.allocs[new];
        b.bytes[..keep].copy_from_slice(&bytes);
        b.set_init(0, &init.unwrap_or_else(|| vec![true; keep]));
        self.release(id, State::Freed);
        Ok(q)
    }

    /// Checks that the `n` bytes at `p` lie in one live allocation that
    /// may be written (for `func`).
    pub(super) fn writable(&self, p: u64, n: u64, func: &str) -> Result<()> {
        let (id, _) = self.locate(p, n, func)?;
        if self.allocs[id].origin == Origin::Literal {
            return Err(interp_err(format!(
                "{func} of {n} bytes into a string literal (allocation {id})"
            )));
        }
        Ok(())
    }

    /// Puts the `order.len()` elements of `each` bytes at `p` in `order`:
    /// element `k` afterwards is element `order[k]` before (bytes and
    /// which of them are initialised). `order` is a permutation.
    pub(super) fn permute(&mut self, p: u64, each: u64, order: &[u64]) -> Result<()> {
        let n = order.len() as u64 * each;
        if n == 0 {
            return Ok(());
        }
        let (id, off) = self.locate(p, n, "qsort")?;
        self.log(id, off, n, false)?;
        self.log(id, off, n, true)?;
        let each = each as usize;
        let a = &mut self.allocs[id];
        let old = a.bytes[off..off + n as usize].to_vec();
        let old_init = a.init.as_ref().map(|i| i[off..off + n as usize].to_vec());
        let mut init = Vec::with_capacity(if old_init.is_some() { n as usize } else { 0 });
        for (k, &from) in order.iter().enumerate() {
            let from = from as usize * each;
            a.bytes[off + k * each..off + (k + 1) * each].copy_from_slice(&old[from..from + each]);
            if let Some(old_init) = &old_init {
                init.extend_from_slice(&old_init[from..from + each]);
            }
        }
        if old_init.is_some() {
            a.set_init(off, &init);
        }
        Ok(())
    }

    /// `memset`: fills `n` bytes with `byte`.
    pub(super) fn fill(&mut self, p: u64, byte: u8, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.write(p, n, "memset")?.fill(byte);
        Ok(())
    }
}
