//! The `run` step: the interpreter's run of a function.

use super::args::{self, Arg};
use super::Fail;
use augur::exec::{Interpreter, Pod, Value};
use augur::ir::{Function, Scalar, Type};

/// Runs `f` in the interpreter on the arguments in `text`.
pub(super) fn interpret(f: &Function, text: &str) -> Result<String, Fail> {
    let mut it = Interpreter::new();
    let mut values = Vec::new();
    let mut arrays = Vec::new();
    for (k, arg) in args::parse(f, text)?.into_iter().enumerate() {
        let v = match arg {
            Arg::Scalar(ty, t) => scalar(ty, &t).map_err(Fail::Case)?,
            Arg::Array(elem, items) => {
                let v = alloc(&mut it, elem, &items).map_err(Fail::Case)?;
                arrays.push((k, elem, items.len(), v));
                v
            }
        };
        values.push(v);
    }
    let result = it.call(f, &values).map(|v| v.to_string());
    let arrays: Vec<(usize, Vec<String>)> = (arrays.into_iter())
        .map(|(k, elem, n, v)| (k, read(&it, elem, v, n)))
        .collect();
    let printed = it.take_output();
    Ok(args::report(
        result.map_err(|e| e.to_string()),
        &arrays,
        &printed,
    ))
}

/// The value of `text` as type `ty`.
#[augur::staged]
fn scalar(ty: Type, text: &str) -> Result<Value, String> {
    let bad = || format!("`{text}` is not a {ty}");
    let int = || text.parse::<i64>().map_err(|_| bad());
    let float = || text.parse::<f64>().map_err(|_| bad());
    Ok(match ty {
        Type::Scalar(Scalar::Bool) => Value::Bool(text.parse().map_err(|_| bad())?),
        Type::Scalar(Scalar::I32) => Value::I32(int()? as i32),
        Type::Scalar(Scalar::I64) => Value::I64(int()?),
        Type::Scalar(Scalar::U8) => Value::U8(int()? as u8),
        Type::Scalar(Scalar::U32) => Value::U32(int()? as u32),
        Type::Scalar(Scalar::U64) => Value::U64(int()? as u64),
        Type::Scalar(Scalar::F32) => Value::F32(float()? as f32),
        _ => Value::F64(float()?),
    })
}

/// `items` as an array of `elem` in the interpreter's memory.
#[augur::staged]
fn alloc(it: &mut Interpreter, elem: Type, items: &[String]) -> Result<Value, String> {
    #[augur::staged]
    fn parse<T: std::str::FromStr>(items: &[String]) -> Result<Vec<T>, String> {
        (items.iter())
            .map(|s| s.parse().map_err(|_| format!("`{s}` is not an element")))
            .collect()
    }
    let m = it.memory_mut();
    Ok(match elem {
        Type::Scalar(Scalar::Bool) => m.alloc_slice(&parse::<bool>(items)?),
        Type::Scalar(Scalar::I32) => m.alloc_slice(&parse::<i32>(items)?),
        Type::Scalar(Scalar::I64) => m.alloc_slice(&parse::<i64>(items)?),
        Type::Scalar(Scalar::U8) => m.alloc_slice(&parse::<u8>(items)?),
        Type::Scalar(Scalar::U32) => m.alloc_slice(&parse::<u32>(items)?),
        Type::Scalar(Scalar::U64) => m.alloc_slice(&parse::<u64>(items)?),
        Type::Scalar(Scalar::F32) => m.alloc_slice(&parse::<f32>(items)?),
        _ => m.alloc_slice(&parse::<f64>(items)?),
    })
}

/// The `n` elements of type `elem` at `v`, printed.
#[augur::staged]
fn read(it: &Interpreter, elem: Type, v: Value, n: usize) -> Vec<String> {
    #[augur::staged]
    fn show<T: Pod + std::fmt::Debug>(it: &Interpreter, v: Value, n: usize) -> Vec<String> {
        match it.memory().read_slice::<T>(v, n) {
            Ok(xs) => xs.iter().map(|x| format!("{x:?}")).collect(),
            Err(e) => vec![format!("unreadable: {e}")],
        }
    }
    match elem {
        Type::Scalar(Scalar::Bool) => show::<bool>(it, v, n),
        Type::Scalar(Scalar::I32) => show::<i32>(it, v, n),
        Type::Scalar(Scalar::I64) => show::<i64>(it, v, n),
        Type::Scalar(Scalar::U8) => show::<u8>(it, v, n),
        Type::Scalar(Scalar::U32) => show::<u32>(it, v, n),
        Type::Scalar(Scalar::U64) => show::<u64>(it, v, n),
        Type::Scalar(Scalar::F32) => show::<f32>(it, v, n),
        _ => show::<f64>(it, v, n),
    }
}
