//! The paper's benchmark programs.
