//! Runs IR functions through the C backend, the JIT and the interpreter
//! and compares what they write.

use augur::exec::{compile, jit, CompileOptions, Interpreter};
use augur::ir::Function;

/// One function and the inputs to run it on.
pub struct Case {
    /// The IR text of `fn case(inp: *mut u64, out: *mut u64)`.
    pub ir: String,
    /// Bytes of `out` the function writes.
    pub out_size: usize,
    /// `inp[0]` and `inp[1]` for each run.
    pub inputs: Vec<[u64; 2]>,
}

type CaseFn = unsafe extern "C" fn(*mut u64, *mut u64);

/// Parses the cases, names them `case_<i>`, compiles them as one C module
/// and one JIT module, and checks every input: where the interpreter
/// runs without error, C, the JIT and the interpreter write the same bytes.
#[augur::staged]
pub fn run_cases(test: &str, cases: &[Case]) {
    let fs: Vec<Function> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut f = augur::ir::parse(&c.ir).unwrap_or_else(|e| panic!("{e}\n{}", c.ir));
            f.name = format!("case_{i}");
            f
        })
        .collect();
    let refs: Vec<&Function> = fs.iter().collect();
    let src = augur::codegen::write_module(&refs);
    // Cases leave `b` unused and shift by constants gcc warns of.
    let mut opts = CompileOptions::default();
    opts.flags.retain(|f| f != "-Werror");
    let lib = compile(&src, &opts).unwrap_or_else(|e| panic!("{test}: {e}"));
    let code = jit::compile_module(&refs, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{test}: {e}"));
    let mut checked = 0;
    let mut first_error = None;
    for (i, (case, f)) in cases.iter().zip(&fs).enumerate() {
        let name = format!("case_{i}");
        // SAFETY: every case is `void case(uint64_t *, uint64_t *)`.
        let (c_fn, jit_fn): (CaseFn, CaseFn) =
            unsafe { (lib.symbol(&name).unwrap(), code.symbol(&name).unwrap()) };
        for inp in &case.inputs {
            let mut it = Interpreter::new();
            let pin = it.memory_mut().alloc_slice(&inp[..]);
            let pout = it.memory_mut().alloc_slice(&[0u64]);
            if let Err(e) = it.call(f, &[pin, pout]) {
                first_error.get_or_insert(format!("{name}: {e}"));
                continue; // undefined in C: nothing to compare
            }
            let want = it.memory().read_slice::<u64>(pout, 1).unwrap()[0];
            let run = |g: CaseFn| {
                let mut i2 = *inp;
                let mut out = [0u64];
                // SAFETY: both buffers hold what the case reads and writes.
                unsafe { g(i2.as_mut_ptr(), out.as_mut_ptr()) };
                out[0]
            };
            let mask = if case.out_size == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * case.out_size)) - 1
            };
            let (c, j, w) = (run(c_fn) & mask, run(jit_fn) & mask, want & mask);
            assert!(
                c == w && j == w,
                "{test} {name}, inputs {inp:#x?}: interpreter {w:#x}, C {c:#x}, JIT {j:#x}\n{}\n{f}",
                case.ir
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "{test}: nothing was compared: {first_error:?}");
    eprintln!("{test}: {} functions, {checked} runs compared", cases.len());
}
