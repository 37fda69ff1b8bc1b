//! The safe call of a checked function ([`Extracted::safe`](crate::Extracted::safe)).
//!
//! A checked function ([`Builder::slice`](crate::Builder::slice),
//! [`Builder::checked`](crate::Builder::checked)) reaches memory only by
//! indexing its slice parameters and local arrays, with every index
//! checked (`passes::bounds`). So calling it is safe once each argument is
//! what its parameter declares: a value of the parameter's type, or, for a
//! slice, a Rust slice of its element type (mutable where the function may
//! write), whose length becomes the length parameter. [`SafeFn::call`]
//! checks exactly that, then calls the compiled code through a generated
//! entry that takes the arguments as an array of 8-byte words
//! (`name__safe(const uint64_t *args, uint64_t *ret)`), so one Rust
//! function calls every signature.

use crate::error::Error;
use crate::exec::compile::CompileOptions;
use crate::exec::interp::{Pod, Value};
use crate::ir::{Function, Scalar, Type};
use crate::pipeline::Part;
use crate::program::Code;
use crate::Result;
use std::marker::PhantomData;

/// An argument of a safe call: a value, or a slice.
#[derive(Debug)]
pub enum SafeArg<'a> {
    /// A scalar of the parameter's type.
    Value(Value),
    /// The elements of a slice parameter.
    Slice(Slice<'a>),
}

/// A Rust slice handed to a safe call, borrowed for the call.
#[derive(Debug)]
pub struct Slice<'a> {
    ptr: *mut u8,
    len: usize,
    elem: Scalar,
    mutable: bool,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a, T: Pod> From<&'a [T]> for SafeArg<'a> {
    fn from(s: &'a [T]) -> Self {
        SafeArg::Slice(Slice {
            ptr: s.as_ptr() as *mut u8,
            len: s.len(),
            elem: T::SCALAR,
            mutable: false,
            _borrow: PhantomData,
        })
    }
}

impl<'a, T: Pod> From<&'a mut [T]> for SafeArg<'a> {
    fn from(s: &'a mut [T]) -> Self {
        SafeArg::Slice(Slice {
            ptr: s.as_mut_ptr() as *mut u8,
            len: s.len(),
            elem: T::SCALAR,
            mutable: true,
            _borrow: PhantomData,
        })
    }
}

impl From<Value> for SafeArg<'_> {
    fn from(v: Value) -> Self {
        SafeArg::Value(v)
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl From<$t> for SafeArg<'_> {
            fn from(v: $t) -> Self {
                SafeArg::Value(Value::from(v))
            }
        }
    )*};
}
scalar_arg!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// A checked function compiled for safe calls.
#[derive(Clone)]
pub struct SafeFn {
    code: Code,
    name: String,
    params: Vec<Type>,
    ret: Type,
    slices: Vec<(usize, usize)>,
}

impl std::fmt::Debug for SafeFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SafeFn({}, {:?})", self.name, self.code.backend())
    }
}

impl SafeFn {
    /// Compiles checked `f` and its word-array entry, with the functions
    /// `f` may call (`callees`: a module's functions, `f` among them).
    pub(crate) fn compile(
        callees: &[&Function],
        f: &Function,
        slices: &[(usize, usize)],
        opts: &CompileOptions,
    ) -> Result<SafeFn> {
        let params: Vec<Type> = f.params.iter().map(|&p| f.vars[p].ty).collect();
        let refuse = |what: String| Error::Misuse {
            message: format!("`{}` cannot be called safely: {what}", f.name),
            location: None,
        };
        for (i, t) in params.iter().enumerate() {
            if !matches!(t, Type::Scalar(_)) && !slices.iter().any(|&(p, _)| p == i) {
                return Err(refuse(format!(
                    "parameter {i} has type {t}, and only scalars and slices (Builder::slice) can be given safely"
                )));
            }
        }
        if !matches!(f.ret, Type::Void | Type::Scalar(_)) {
            return Err(refuse(format!("it returns {}, not a scalar", f.ret)));
        }
        let entry = entry(f, &params)?;
        let mut fs: Vec<&Function> = callees.to_vec();
        if !fs.iter().any(|g| g.name == f.name) {
            fs.push(f);
        }
        fs.push(&entry);
        let code = crate::program::compile(&fs, opts)?;
        Ok(SafeFn {
            code,
            name: entry.name,
            params,
            ret: f.ret,
            slices: slices.to_vec(),
        })
    }

    /// Calls the function with `args`: one per parameter that is not a
    /// slice's length (lengths come from the slices), each checked against
    /// its parameter. Slices sharing one length must be equally long.
    pub fn call(&self, args: &mut [SafeArg<'_>]) -> Result<Value> {
        let words = self.words(args)?;
        // SAFETY: the entry was compiled from IR generated for exactly this
        // type: it reads one word per parameter and writes one word.
        let entry = unsafe {
            self.code
                .symbol::<unsafe extern "C" fn(*const u64, *mut u64)>(&self.name)?
        };
        let mut ret = 0u64;
        // SAFETY: `words` holds a value of each scalar parameter's type and,
        // for each slice, the address of a live Rust slice borrowed
        // (mutably where the parameter is `*mut`) for the call, with its
        // length in the length parameter; the function is checked, so it
        // reaches memory only within those slices and its own locals.
        unsafe { entry(words.as_ptr(), &mut ret) };
        Ok(match self.ret {
            Type::Scalar(s) => {
                Value::decode(s, &ret.to_le_bytes()[..s.size() as usize]).expect("a scalar's bytes")
            }
            _ => Value::Void,
        })
    }

    /// The argument words, every argument checked.
    fn words(&self, args: &[SafeArg<'_>]) -> Result<Vec<u64>> {
        let bad = |message: String| Error::Misuse {
            message,
            location: None,
        };
        let is_len = |i: usize| self.slices.iter().any(|&(_, n)| n == i);
        let wanted = (0..self.params.len()).filter(|&i| !is_len(i)).count();
        if args.len() != wanted {
            return Err(bad(format!(
                "`{}` takes {wanted} arguments (its slices' lengths come from the slices), given {}",
                self.name.trim_end_matches("__safe"),
                args.len()
            )));
        }
        let mut words = vec![0u64; self.params.len()];
        let mut lens: Vec<Option<usize>> = vec![None; self.params.len()];
        let mut given = args.iter();
        for (i, ty) in self.params.iter().enumerate() {
            if is_len(i) {
                continue;
            }
            let arg = given.next().expect("counted above");
            match (ty, arg) {
                (Type::Scalar(s), SafeArg::Value(v)) if v.scalar() == Some(*s) => {
                    let (bytes, _) = v.encode();
                    words[i] = u64::from_le_bytes(bytes);
                }
                (Type::Ptr { to, mutable }, SafeArg::Slice(sl))
                    if to.as_scalar() == Some(sl.elem) =>
                {
                    if *mutable && !sl.mutable {
                        return Err(bad(format!(
                            "parameter {i} is {ty}, which may be written: give a mutable slice"
                        )));
                    }
                    let n = self
                        .slices
                        .iter()
                        .find(|&&(p, _)| p == i)
                        .expect("a slice")
                        .1;
                    match lens[n] {
                        Some(l) if l != sl.len => {
                            return Err(bad(format!(
                                "slices of length {l} and {} share the length parameter {n}",
                                sl.len
                            )))
                        }
                        _ => lens[n] = Some(sl.len),
                    }
                    words[i] = sl.ptr as u64;
                }
                (ty, arg) => {
                    let given = match arg {
                        SafeArg::Value(v) => format!("{v} of type {}", v.ty()),
                        SafeArg::Slice(s) => format!("a slice of {}", Type::Scalar(s.elem)),
                    };
                    return Err(bad(format!("parameter {i} has type {ty}, given {given}")));
                }
            }
        }
        for (n, len) in lens.iter().enumerate() {
            let Some(len) = *len else { continue };
            let Type::Scalar(s) = self.params[n] else {
                unreachable!("an integer length")
            };
            let v = i64::try_from(len)
                .ok()
                .and_then(|l| Value::int_of(s, l))
                .filter(|v| v.as_i64() == i64::try_from(len).ok());
            let Some(v) = v else {
                return Err(bad(format!(
                    "a slice of {len} elements does not fit parameter {n}, of type {s:?}"
                )));
            };
            words[n] = u64::from_le_bytes(v.encode().0);
        }
        Ok(words)
    }
}

/// `void name__safe(const uint64_t *args, uint64_t *ret)`: reads each
/// parameter from its word, calls `f`, stores the result.
fn entry(f: &Function, params: &[Type]) -> Result<Function> {
    let name = &f.name;
    let types: Vec<String> = params.iter().map(Type::to_string).collect();
    let args: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("*((args + {i}) as *const {t})"))
        .collect();
    let call = format!("{name}({})", args.join(", "));
    let body = match f.ret {
        Type::Void => format!("  {call};\n"),
        r => format!("  let r: {r} = {call};\n  *(ret as *mut {r}) = r;\n"),
    };
    let text = format!(
        "extern {name}({}) -> {};\nfn {name}__safe(args: *const u64, ret: *mut u64) {{\n{body}}}\n",
        types.join(", "),
        f.ret
    );
    crate::ir::parse(&text).map_err(|e| Error::Internal {
        message: format!("the safe entry of `{name}` does not read back: {e}\n{text}"),
    })
}

/// A safe call of `part`'s function, compiled with the functions it may
/// call (`callees`, `part`'s own function among them for a module).
pub(crate) fn of_part(callees: &[&Function], part: &Part, opts: &CompileOptions) -> Result<SafeFn> {
    let Some(slices) = &part.slices else {
        return Err(Error::Misuse {
            message: format!(
                "`{}` is not checked: extract it with Builder::slice or Builder::checked \
                 for a safe call",
                part.func.name
            ),
            location: Some(part.loc),
        });
    };
    crate::ir::device::runs_as_loop_nest(&part.func)?;
    SafeFn::compile(callees, &part.func, slices, opts)
}
