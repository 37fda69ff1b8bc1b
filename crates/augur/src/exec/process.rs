//! The C library functions of the running process, found as the dynamic
//! linker finds them for compiled code: through the process's global
//! scope, then the C math library itself (opened by its soname when the
//! process has not loaded it; a compiled library that calls it loads it as
//! its dependency). Not through Rust's own `extern` declarations: Rust's
//! runtime carries private copies of some of them (`cbrt`, `fmaxf`, ...)
//! that differ from the C library's in a last bit or a zero's sign, and a
//! static reference would bind to those.

/// The address of the C function `name`, if the process has one.
#[cfg(unix)]
pub(crate) fn c_symbol(name: &str) -> Option<usize> {
    use libloading::os::unix::{Library, RTLD_LAZY};
    use std::sync::OnceLock;
    static SCOPES: OnceLock<Vec<Library>> = OnceLock::new();
    let scopes = SCOPES.get_or_init(|| {
        let mut libs = vec![Library::this()];
        let libm = ["libm.so.6", "libm.so"].iter().find_map(|soname| {
            // SAFETY: the C math library's initialisers are the C
            // library's own; it stays loaded for the rest of the process.
            unsafe { Library::open(Some(soname), RTLD_LAZY) }.ok()
        });
        libs.extend(libm);
        libs
    });
    let cname = std::ffi::CString::new(name).ok()?;
    scopes.iter().find_map(|lib| {
        // SAFETY: the symbol is only read as an address here; callers call
        // it with the C signature its header declares.
        let sym = unsafe { lib.get::<*const u8>(cname.as_bytes_with_nul()) }.ok()?;
        let address = *sym as usize;
        (address != 0).then_some(address)
    })
}

/// No dynamic linker to ask: nothing is found.
#[cfg(not(unix))]
pub(crate) fn c_symbol(_name: &str) -> Option<usize> {
    None
}
