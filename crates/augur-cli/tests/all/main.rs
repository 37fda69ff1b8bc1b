//! The `augur` command's integration tests, in one test binary: each module was a test
//! binary of its own (a test keeps its name under `<module>::`).

mod cli;
mod device_check;
mod paper_programs;
mod publishing;
