//! Running the second stage.
