//! An interpreter for [`ir::Function`](crate::ir::Function): runs extracted
//! code without a C compiler.
//!
//! It is the default way to run a function and the oracle of the
//! differential tests, so its results equal those of the generated C
//! compiled with `-fwrapv` on x86-64 or aarch64 Linux, and where C would
//! silently go wrong (out-of-bounds or use-after-free accesses, reads of
//! uninitialised variables or memory, division by zero, shifts out of range,
//! `INT_MIN / -1`, out-of-range float-to-int casts) it stops with
//! [`Error::Interp`] naming the problem and, when the
//! statement has one, its source location.
//!
//! What a machine runs at once runs here in turn, checked that it could
//! run at once: the iterations of a loop with the pragma `omp parallel
//! for`, the threads of a launch, and the threads of the GPU simulation's
//! loops ([`Annotation::Threads`](crate::ir::Annotation::Threads)). A byte
//! that one writes and another reads or writes, or an assignment to a
//! variable declared outside, is a data race, reported with both (a
//! compiled run would show it only now and then, if ever).
//!
//! Memory is a safe model ([`Memory`]): pointers are allocation ids and
//! offsets, never host addresses. Host data goes in with
//! [`Memory::alloc_slice`] and comes out with [`Memory::read_slice`].
//!
//! ```
//! use augur::exec::{Interpreter, Value};
//! let func = augur::ir::parse(
//!     "fn sum(p: *mut i32, n: i32) -> i32 {
//!        var s: i32 = 0;
//!        for (var i: i32 = 0; i < n; i = i + 1) {
//!          s = s + p[i];
//!        }
//!        return s;
//!      }",
//! )?;
//! let mut it = Interpreter::new();
//! let xs = it.memory_mut().alloc_slice(&[1i32, 2, 3]);
//! let sum = it.call(&func, &[xs, Value::I32(3)])?;
//! assert_eq!(sum, Value::I32(6));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod builtins;
mod eval;
mod math;
mod memory;
mod ops;
mod printf;
mod races;
pub(crate) mod value;

#[cfg(test)]
mod tests;

pub use memory::Memory;
pub use value::{Elem, Pod, Value};

use crate::ir::Function;
use crate::{Error, Result};
use builtins::Output;
use std::collections::HashMap;
use std::rc::Rc;

/// A host function that the interpreted code calls as an extern.
pub type HostFn = Box<dyn FnMut(&mut Memory, &[Value]) -> Result<Value>>;

/// Default for [`Interpreter::set_step_limit`].
pub const DEFAULT_STEP_LIMIT: u64 = 200_000_000;

/// Default for [`Interpreter::set_call_depth_limit`].
pub const DEFAULT_CALL_DEPTH_LIMIT: u32 = 10_000;

/// Runs [`Function`]s over one [`Memory`]; memory, registered externs and
/// output persist across calls.
pub struct Interpreter {
    memory: Memory,
    /// User externs in registration order, found through `extern_index`.
    externs: Vec<HostFn>,
    extern_index: HashMap<String, usize>,
    /// Functions of the module (`add_function`), found by name before
    /// externs and built-ins.
    functions: Vec<Rc<Function>>,
    function_index: HashMap<String, usize>,
    output: Output,
    step_limit: u64,
    /// Statements run by the current top-level call, its callees included.
    steps: u64,
    call_depth_limit: u32,
    /// Calls between functions in progress.
    depth: u32,
}

impl Default for Interpreter {
    fn default() -> Self {
        Interpreter {
            memory: Memory::new(),
            externs: Vec::new(),
            extern_index: HashMap::new(),
            functions: Vec::new(),
            function_index: HashMap::new(),
            output: Output::default(),
            step_limit: DEFAULT_STEP_LIMIT,
            steps: 0,
            call_depth_limit: DEFAULT_CALL_DEPTH_LIMIT,
            depth: 0,
        }
    }
}

impl std::fmt::Debug for Interpreter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interpreter")
            .field("externs", &self.extern_index.keys().collect::<Vec<_>>())
            .field("functions", &self.function_index.keys().collect::<Vec<_>>())
            .field("step_limit", &self.step_limit)
            .finish_non_exhaustive()
    }
}

impl Interpreter {
    /// An interpreter with empty memory, no user externs and the default
    /// step limit.
    pub fn new() -> Interpreter {
        Interpreter::default()
    }

    /// Makes `name` callable as an extern; it overrides a built-in of the
    /// same name and replaces an earlier registration. The function gets the
    /// memory and the evaluated arguments and returns the result
    /// ([`Value::Void`] for a `void` extern).
    pub fn register(
        &mut self,
        name: impl Into<String>,
        f: impl FnMut(&mut Memory, &[Value]) -> Result<Value> + 'static,
    ) {
        let name = name.into();
        match self.extern_index.get(&name) {
            Some(&i) => self.externs[i] = Box::new(f),
            None => {
                self.extern_index.insert(name, self.externs.len());
                self.externs.push(Box::new(f));
            }
        }
    }

    /// Makes `f` callable by its name from the code this interpreter runs,
    /// as a function of the same C unit would be (a module's functions
    /// call each other so: [`ExtractedModule::interpret`](crate::ExtractedModule::interpret)).
    /// It is found before registered externs and built-ins of that name,
    /// and replaces an earlier function of that name.
    ///
    /// ```
    /// use augur::exec::{Interpreter, Value};
    /// let fact = augur::ir::parse(
    ///     "extern fact(i64) -> i64;
    ///      fn fact(n: i64) -> i64 {
    ///        if (n < 2i64) { return 1i64; }
    ///        return n * fact(n - 1i64);
    ///      }",
    /// )?;
    /// let mut it = Interpreter::new();
    /// it.add_function(&fact);
    /// assert_eq!(it.call(&fact, &[Value::I64(10)])?, Value::I64(3628800));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_function(&mut self, f: &Function) {
        let f = Rc::new(f.clone());
        match self.function_index.get(&f.name) {
            Some(&i) => self.functions[i] = f,
            None => {
                self.function_index
                    .insert(f.name.clone(), self.functions.len());
                self.functions.push(f);
            }
        }
    }

    /// Caps how deeply calls between functions ([`add_function`](Interpreter::add_function))
    /// may nest; default [`DEFAULT_CALL_DEPTH_LIMIT`]. Past it the call
    /// stops with [`Error::Interp`] (where compiled code would overflow
    /// its stack, or recurse for ever).
    pub fn set_call_depth_limit(&mut self, depth: u32) {
        self.call_depth_limit = depth;
    }

    /// The memory, to read results.
    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// The memory, to allocate arguments.
    pub fn memory_mut(&mut self) -> &mut Memory {
        &mut self.memory
    }

    /// Everything `printf`, `puts` and `putchar` wrote so far (bytes that are
    /// not UTF-8 appear as U+FFFD).
    pub fn output(&self) -> &str {
        self.output.text()
    }

    /// Returns [`output`](Interpreter::output) and clears it.
    pub fn take_output(&mut self) -> String {
        self.output.take()
    }

    /// Also copies the output to the process's stdout as it is written
    /// (off by default).
    pub fn set_echo(&mut self, echo: bool) {
        self.output.echo = echo;
    }

    /// Caps the statements (and loop iterations) one [`call`](Interpreter::call)
    /// may execute, the functions it calls included; default
    /// [`DEFAULT_STEP_LIMIT`].
    pub fn set_step_limit(&mut self, steps: u64) {
        self.step_limit = steps;
    }

    /// Runs `f` with `args`, which must match its parameters in number and
    /// type (a pointer for pointer and array parameters). Returns the result,
    /// [`Value::Void`] for a `void` function.
    pub fn call(&mut self, f: &Function, args: &[Value]) -> Result<Value> {
        check_args(f, args)?;
        crate::ir::device::runs_as_loop_nest(f)?;
        self.steps = 0;
        self.depth = 0;
        eval::run(self, f, args)
    }
}

fn check_args(f: &Function, args: &[Value]) -> Result<()> {
    if args.len() != f.params.len() {
        return Err(Error::Interp {
            message: format!(
                "`{}` takes {} arguments, got {}",
                f.name,
                f.params.len(),
                args.len()
            ),
        });
    }
    for (i, (&p, a)) in f.params.iter().zip(args).enumerate() {
        let ty = &f.vars[p].ty;
        if !a.fits(ty) {
            return Err(Error::Interp {
                message: format!(
                    "argument {} of `{}` is {a} of type {}, but parameter `{}` has type {ty}",
                    i + 1,
                    f.name,
                    a.ty(),
                    f.var_name(p)
                ),
            });
        }
    }
    Ok(())
}
