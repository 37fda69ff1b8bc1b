//! Prints the C the staged interpreter makes of a program: `cargo run
//! -p augur-bf --example emit -- [squares|hello|FILE] [--no-fold] [--static-pc]`.

use augur_bf::{extract, squares, Form, Options, Program, HELLO};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let prog = match args.first().map(String::as_str) {
        None | Some("squares") => squares(),
        Some("hello") => Program::parse(HELLO)?,
        Some(path) => Program::parse(&std::fs::read_to_string(path)?)?,
    };
    let opts = Options {
        fold: !args.iter().any(|a| a == "--no-fold"),
        form: if args.iter().any(|a| a == "--static-pc") {
            Form::StaticPc
        } else {
            Form::Points
        },
    };
    let f = extract(&prog, opts, &augur::Builder::new())?;
    println!("{}", f.c_code());
    eprintln!("{}", f.stats());
    Ok(())
}
