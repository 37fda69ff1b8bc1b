//! Tutorial chapter 8: values whose type is first-stage data.
//!
//! A small query compiler. A table's schema (each column's name and
//! type) is a first-stage `Vec`, a query is a filter and a sum in an
//! expression language with C's types and promotions, and each query is
//! compiled for each schema: `DynValue`s carry the types, `DynPtr`s read
//! the columns, and the C of every schema is as specific as hand-written
//! code. Results are checked against plain Rust, on compiled code and in
//! the interpreter.
//!
//! Run with `cargo run -p augur-staging --example tutorial_8_dynamic`
//! (see `augur::tutorial::ch8_dynamic`).

use augur::exec::interp::{Interpreter, Value};
use augur::{Builder, Dyn, DynPtr, DynValue, Extracted, ScalarType};
use ScalarType::*;

/// Each column's name and type.
struct Schema(Vec<(&'static str, ScalarType)>);

impl Schema {
    fn index(&self, name: &str) -> usize {
        self.0
            .iter()
            .position(|&(n, _)| n == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    }
}

/// An operator of the query language.
#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Lt,
    Le,
    Ge,
}

/// An expression: a column, a C `int` or `double` literal, an operator,
/// a conjunction.
enum Expr {
    Col(&'static str),
    Int(i32),
    Float(f64),
    Bin(Op, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
}

fn col(name: &'static str) -> Expr {
    Expr::Col(name)
}

fn bin(op: Op, a: Expr, b: Expr) -> Expr {
    Expr::Bin(op, Box::new(a), Box::new(b))
}

fn and(a: Expr, b: Expr) -> Expr {
    Expr::And(Box::new(a), Box::new(b))
}

/// `select sum(sum) where filter`.
struct Query {
    name: &'static str,
    filter: Expr,
    sum: Expr,
}

/// A condition as C reads one: a number is true when it is not zero.
#[augur::staged]
fn truth(v: DynValue) -> DynValue {
    if v.ty() == Bool {
        v
    } else {
        v.ne(0)
    }
}

/// `e` on row `i` of the columns `cols`, with C's promotions.
#[augur::staged]
fn eval(e: &Expr, schema: &Schema, cols: &[DynPtr], i: Dyn<i64>) -> DynValue {
    match e {
        Expr::Col(name) => cols[schema.index(name)].load(i),
        Expr::Int(v) => DynValue::lit(I32, *v),
        Expr::Float(v) => DynValue::lit(F64, *v),
        Expr::And(a, b) => truth(eval(a, schema, cols, i)) & truth(eval(b, schema, cols, i)),
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, schema, cols, i), eval(b, schema, cols, i));
            let (a, b) = DynValue::promote(a, b);
            match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::Lt => a.lt(b),
                Op::Le => a.le(b),
                Op::Ge => a.ge(b),
            }
        }
    }
}

/// The query over `n` rows of the columns at `table` (one pointer per
/// column, of the schema's types); the sum as a `double`.
#[augur::staged]
fn run_query(schema: &Schema, q: &Query, table: Dyn<*mut *mut u8>, n: Dyn<i64>) -> Dyn<f64> {
    let cols: Vec<DynPtr> = (0..schema.0.len())
        .map(|k| DynPtr::from_raw(table.at(k), schema.0[k].1))
        .collect();
    let sum = DynValue::named("sum", F64, 0);
    let i = Dyn::named("i", 0i64);
    while i.lt(n).is_true() {
        if truth(eval(&q.filter, schema, &cols, i)).is_true() {
            // `sum += x` as C reads it: `x` converted to `double`.
            let (s, x) = DynValue::promote(sum, eval(&q.sum, schema, &cols, i));
            sum.set(s + x);
        }
        i.set(i + 1);
    }
    sum.expect::<f64>()
}

/// A row as plain Rust sees it.
struct Row {
    qty: i32,
    price: f64,
    disc: f64,
    flag: bool,
}

/// `v` as the bytes of a `ty`.
fn bytes(ty: ScalarType, v: f64) -> Vec<u8> {
    match ty {
        Bool => vec![(v != 0.0) as u8],
        I8 => (v as i8).to_ne_bytes().to_vec(),
        I16 => (v as i16).to_ne_bytes().to_vec(),
        I32 => (v as i32).to_ne_bytes().to_vec(),
        I64 => (v as i64).to_ne_bytes().to_vec(),
        U8 => (v as u8).to_ne_bytes().to_vec(),
        U16 => (v as u16).to_ne_bytes().to_vec(),
        U32 => (v as u32).to_ne_bytes().to_vec(),
        U64 => (v as u64).to_ne_bytes().to_vec(),
        F32 => (v as f32).to_ne_bytes().to_vec(),
        F64 => v.to_ne_bytes().to_vec(),
    }
}

/// The table's columns in the schema's types. Every value is exact in
/// every type used (prices in quarters, discounts in sixteenths), so the
/// results do not depend on the schema.
fn columns(schema: &Schema, rows: &[Row]) -> Vec<Vec<u8>> {
    schema
        .0
        .iter()
        .map(|&(name, ty)| {
            rows.iter()
                .flat_map(|r| {
                    let v = match name {
                        "qty" => r.qty as f64,
                        "price" => r.price,
                        "disc" => r.disc,
                        _ => r.flag as u8 as f64,
                    };
                    bytes(ty, v)
                })
                .collect()
        })
        .collect()
}

/// Compiled code and the interpreter on the same columns.
fn run(
    ex: &Extracted<unsafe extern "C" fn(*mut *mut u8, i64) -> f64>,
    cols: &[Vec<u8>],
    n: usize,
) -> augur::Result<(f64, f64)> {
    let mut copies = cols.to_vec();
    let mut table: Vec<*mut u8> = copies.iter_mut().map(|c| c.as_mut_ptr()).collect();
    let f = ex.compile()?;
    // SAFETY: one pointer per column, each holding `n` values of its type.
    let compiled = unsafe { f.get()(table.as_mut_ptr(), n as i64) };

    let mut it = Interpreter::new();
    let ptrs: Vec<Value> = cols
        .iter()
        .map(|c| it.memory_mut().alloc_slice(c))
        .collect();
    let table = it.memory_mut().alloc(8 * cols.len());
    let Value::Ptr(base) = table else {
        unreachable!("alloc gives a pointer")
    };
    for (k, &p) in ptrs.iter().enumerate() {
        it.memory_mut().store(Value::Ptr(base + 8 * k as u64), p)?;
    }
    let interpreted = ex.interpret_in(&mut it, &[table, Value::I64(n as i64)])?;
    Ok((compiled, interpreted.as_f64().expect("a double")))
}

#[augur::staged]
fn main() -> augur::Result<()> {
    use Op::*;
    let schemas = [
        Schema(vec![
            ("qty", I32),
            ("price", F64),
            ("disc", F64),
            ("flag", Bool),
        ]),
        Schema(vec![
            ("flag", U8),
            ("qty", I64),
            ("price", F32),
            ("disc", F32),
        ]),
        Schema(vec![
            ("price", F64),
            ("disc", F32),
            ("qty", F64),
            ("flag", I32),
        ]),
    ];
    let queries = [
        // sum(price * (1 - disc)) where flag and qty < 24
        Query {
            name: "net",
            filter: and(col("flag"), bin(Lt, col("qty"), Expr::Int(24))),
            sum: bin(Mul, col("price"), bin(Sub, Expr::Int(1), col("disc"))),
        },
        // TPC-H Q6: sum(price * disc) where qty < 24 and disc between 0.05 and 0.07
        Query {
            name: "q6",
            filter: and(
                bin(Lt, col("qty"), Expr::Int(24)),
                and(
                    bin(Ge, col("disc"), Expr::Float(0.05)),
                    bin(Le, col("disc"), Expr::Float(0.07)),
                ),
            ),
            sum: bin(Mul, col("price"), col("disc")),
        },
        // sum(qty + 1) where price >= 500: integers summed as doubles
        Query {
            name: "qty",
            filter: bin(Ge, col("price"), Expr::Int(500)),
            sum: bin(Add, col("qty"), Expr::Int(1)),
        },
    ];
    let plain: [fn(&Row) -> Option<f64>; 3] = [
        |r| (r.flag && r.qty < 24).then(|| r.price * (1.0 - r.disc)),
        |r| (r.qty < 24 && r.disc >= 0.05 && r.disc <= 0.07).then(|| r.price * r.disc),
        |r| (r.price >= 500.0).then(|| r.qty as f64 + 1.0),
    ];

    // 1000 rows from a small generator.
    let mut seed = 7u64;
    let mut next = |m: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    let rows: Vec<Row> = (0..1000)
        .map(|_| Row {
            qty: next(50) as i32,
            price: next(4000) as f64 / 4.0,
            disc: next(16) as f64 / 16.0,
            flag: next(3) != 0,
        })
        .collect();

    for (s, schema) in schemas.iter().enumerate() {
        let cols = columns(schema, &rows);
        for (q, plain) in queries.iter().zip(plain) {
            let name = format!("{}_{s}", q.name);
            let ex = Builder::new().extract(&name, |t: Dyn<*mut *mut u8>, n: Dyn<i64>| {
                run_query(schema, q, t, n)
            })?;
            let types: Vec<String> = schema.0.iter().map(|(n, t)| format!("{n}: {t}")).collect();
            println!("== {name} over [{}] ==\n{}", types.join(", "), ex.c_code());
            let want = rows.iter().filter_map(plain).fold(0.0, |a, x| a + x);
            let (compiled, interpreted) = run(&ex, &cols, rows.len())?;
            assert_eq!(compiled, want, "{name}: compiled");
            assert_eq!(interpreted, want, "{name}: interpreted");
            println!("// {name}: {compiled}, as plain Rust, compiled and interpreted\n");
        }
    }
    Ok(())
}
