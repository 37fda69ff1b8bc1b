//! `DynValue` and `DynPtr`: values whose type is first-stage data.
//!
//! * A schema-driven query (filter, sum, projection over columns whose
//!   types come from a first-stage `Vec<ScalarType>`) on C, the JIT and
//!   the interpreter, against plain Rust, for several schemas; its C is the
//!   C of the same query written over typed `Dyn`s.
//! * Every operator on every type, table by table: the C equals the typed
//!   program's, and the results are Rust's.
//! * Every cast between every pair of types, against Rust's `as`.
//! * Literals taking the other operand's type.
//! * Each type error: its `TypeError` and the user's line.

use crate::common::{extract, Buf, Check, Rng};
use augur::exec::{Backend, CompileOptions};
use augur::{Builder, CScalar, Dyn, DynPtr, DynValue, Error, ScalarType, TypeError};
use std::cell::Cell;

/// One check on C, one on the JIT (each also runs the interpreter).
fn backends() -> [Check; 2] {
    let jit = CompileOptions::default().with_backend(Backend::Jit);
    [
        Check::default(),
        Check {
            opts: jit,
            ..Check::default()
        },
    ]
}

/// Stores `v` into the 8-byte slot `k` of `out`, through a `DynPtr` of
/// the value's type (the same code for a typed `Dyn` and a `DynValue`).
#[track_caller]
fn put(out: Dyn<*mut u8>, k: usize, v: impl Into<DynValue>) {
    let v = v.into();
    DynPtr::from_raw(out.offset(8 * k), v.ty()).store(0, v);
}

/// Rust values as the bytes `put` writes.
trait Bytes: Copy {
    fn bytes(self) -> Vec<u8>;
}
macro_rules! bytes {
    ($($t:ty),*) => {$(
        impl Bytes for $t {
            fn bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
        }
    )*};
}
bytes!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
impl Bytes for bool {
    fn bytes(self) -> Vec<u8> {
        vec![self as u8]
    }
}

/// Appends `v` as one 8-byte slot.
fn slot(out: &mut Vec<u8>, v: impl Bytes) {
    let mut b = v.bytes();
    b.resize(8, 0);
    out.extend(b);
}

/// What the operator tables write the same way for a typed `Dyn<T>` and
/// a `DynValue`: a fresh variable, and a select.
trait Both: Copy + Into<DynValue> {
    type Bool;
    fn fresh(self) -> Self;
    fn pick(c: Self::Bool, a: Self, b: Self) -> Self;
}

impl<T: CScalar> Both for Dyn<T>
where
    Dyn<T>: Into<DynValue>,
{
    type Bool = Dyn<bool>;
    #[track_caller]
    fn fresh(self) -> Self {
        Dyn::new(self)
    }
    #[track_caller]
    fn pick(c: Dyn<bool>, a: Self, b: Self) -> Self {
        Dyn::select(c, a, b)
    }
}

impl Both for DynValue {
    type Bool = DynValue;
    #[track_caller]
    fn fresh(self) -> Self {
        DynValue::new_var(self.ty(), self)
    }
    #[track_caller]
    fn pick(c: DynValue, a: Self, b: Self) -> Self {
        DynValue::select(c, a, b)
    }
}

#[track_caller]
fn fresh<V: Both>(v: V) -> V {
    v.fresh()
}

#[track_caller]
fn pick<V: Both>(c: V::Bool, a: V, b: V) -> V {
    V::pick(c, a, b)
}

/// Runs one operator table on type `$t`: the staged expressions (written
/// once, over `Dyn<$t>` and over `DynValue`) against the Rust ones.
macro_rules! table {
    ($name:expr, $t:ty, $inputs:expr; |$a:ident, $b:ident| $($e:expr => $r:expr;)*) => {{
        let typed = |$a: Dyn<$t>, $b: Dyn<$t>, out: Dyn<*mut u8>| {
            let mut k = 0;
            $(put(out, k, $e); k += 1;)*
            let _ = k;
        };
        let dynamic = |$a: Dyn<$t>, $b: Dyn<$t>, out: Dyn<*mut u8>| {
            let ($a, $b) = (DynValue::from($a), DynValue::from($b));
            assert_eq!($a.ty(), ScalarType::of::<$t>());
            let mut k = 0;
            $(put(out, k, $e); k += 1;)*
            let _ = k;
        };
        let rust = |($a, $b, out): &mut ($t, $t, Buf<u8>)| {
            let ($a, $b) = (*$a, *$b);
            let mut bytes = Vec::new();
            $(slot(&mut bytes, $r);)*
            out.0 = bytes;
        };
        let slots = [$(stringify!($r)),*].len();
        let inputs: Vec<($t, $t, Buf<u8>)> = $inputs
            .into_iter()
            .map(|(a, b)| (a, b, Buf(vec![0u8; 8 * slots])))
            .collect();
        let want = extract(concat!($name, "_typed"), typed).c_code();
        for check in backends() {
            let got = check.run($name, dynamic, rust, &inputs);
            // The dispatch is first-stage only: typed code's C exactly.
            assert_eq!(
                got.c_code().replace($name, "F"),
                want.replace(concat!($name, "_typed"), "F"),
                "{}: DynValue and typed C differ", $name
            );
        }
    }};
}

/// Integer values at the edges and in between.
macro_rules! int_edges {
    ($t:ident) => {{
        let mut v = vec![$t::MIN, $t::MAX];
        v.extend([-1i64, 0, 1, 2, 3, 7, 0x5a, -0x5b, 0x5a5a_5a5a_5a5a_5a5a].map(|x| x as $t));
        v
    }};
}

/// Pairs where `/` and `%` have Rust's value (no zero divisor, no
/// `MIN / -1`; `rust_operators` covers those).
macro_rules! int_pairs {
    ($t:ident) => {{
        let v = int_edges!($t);
        let mut pairs = Vec::new();
        for &a in &v {
            for &b in &v {
                if a.checked_div(b).is_some() {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }};
}

/// The table of an integer type; `$($neg)*` adds unary minus for signed ones.
macro_rules! int_table {
    ($t:ident $(, $neg:tt)?) => {
        table!(concat!("dv_int_", stringify!($t)), $t, int_pairs!($t); |a, b|
            a + b => a.wrapping_add(b);
            a - b => a.wrapping_sub(b);
            a * b => a.wrapping_mul(b);
            a / b => a.wrapping_div(b);
            a % b => a.wrapping_rem(b);
            a & b => a & b;
            a | b => a | b;
            a ^ b => a ^ b;
            !a => !a;
            a << b => a.wrapping_shl(b as u32);
            a >> b => a.wrapping_shr(b as u32);
            a << 5u8 => a.wrapping_shl(5);
            a >> 70i64 => a.wrapping_shr(70);
            (1 as $t) << b => (1 as $t).wrapping_shl(b as u32);
            a + (100 as $t) => a.wrapping_add(100);
            (3 as $t) - a => (3 as $t).wrapping_sub(a);
            (7 as $t) * a => (7 as $t).wrapping_mul(a);
            a % (7 as $t) => a.wrapping_rem(7);
            (0x5a as $t) & a => 0x5a & a;
            a.eq(b) => a == b;
            a.ne(b) => a != b;
            a.lt(b) => a < b;
            a.le(b) => a <= b;
            a.gt(b) => a > b;
            a.ge(b) => a >= b;
            a.lt(3 as $t) => a < 3;
            pick(a.lt(b), a, b) => a.min(b);
            {
                let mut v = fresh(a);
                v += b;
                v *= b;
                v -= 7 as $t;
                v
            } => a.wrapping_add(b).wrapping_mul(b).wrapping_sub(7);
            {
                let mut v = fresh(a);
                v /= b;
                v %= 5 as $t;
                v
            } => a.wrapping_div(b).wrapping_rem(5);
            {
                let mut v = fresh(a);
                v &= b;
                v |= 3 as $t;
                v ^= b;
                v <<= 3u32;
                v >>= b;
                v
            } => ((((a & b) | 3) ^ b).wrapping_shl(3)).wrapping_shr(b as u32);
            $(
                $neg a => a.wrapping_neg();
            )?
        )
    };
}

#[test]
#[augur::staged]
fn every_integer_operator_is_typed_code_and_rusts() {
    int_table!(i8, -);
    int_table!(i16, -);
    int_table!(i32, -);
    int_table!(i64, -);
    int_table!(u8);
    int_table!(u16);
    int_table!(u32);
    int_table!(u64);
}

macro_rules! float_table {
    ($t:ident) => {{
        let v: [$t; 8] = [-2.5, -1.0, 0.0, 0.5, 1.0, 3.25, 1e10, -7.75];
        let mut pairs = Vec::new();
        for &a in &v {
            for &b in &v {
                if b != 0.0 {
                    pairs.push((a, b));
                }
            }
        }
        table!(concat!("dv_float_", stringify!($t)), $t, pairs; |a, b|
            a + b => a + b;
            a - b => a - b;
            a * b => a * b;
            a / b => a / b;
            -a => -a;
            a * (2.5 as $t) => a * 2.5;
            (1.0 as $t) - a => 1.0 - a;
            (10.0 as $t) / b => 10.0 / b;
            a.eq(b) => a == b;
            a.ne(b) => a != b;
            a.lt(b) => a < b;
            a.le(b) => a <= b;
            a.gt(b) => a > b;
            a.ge(b) => a >= b;
            a.ge(0.5 as $t) => a >= 0.5;
            pick(a.lt(b), a, b) => if a < b { a } else { b };
            {
                let mut v = fresh(a);
                v += b;
                v *= b;
                v -= 0.25 as $t;
                v /= b;
                v
            } => ((a + b) * b - 0.25) / b;
        )
    }};
}

#[test]
#[augur::staged]
fn every_float_operator_is_typed_code_and_rusts() {
    float_table!(f32);
    float_table!(f64);
}

#[test]
#[augur::staged]
fn every_bool_operator_is_typed_code_and_rusts() {
    let mut pairs = Vec::new();
    for a in [false, true] {
        for b in [false, true] {
            // At least five inputs: each pair twice.
            pairs.push((a, b));
            pairs.push((a, b));
        }
    }
    table!("dv_bool", bool, pairs; |a, b|
        a & b => a & b;
        a | b => a | b;
        a ^ b => a ^ b;
        !a => !a;
        a & true => a;
        b | false => b;
        a.and(b) => a && b;
        a.or(b) => a || b;
        a.eq(b) => a == b;
        a.ne(b) => a != b;
        a.lt(b) => !a & b;
        a.le(b) => a <= b;
        a.gt(b) => a & !b;
        a.ge(b) => a >= b;
        pick(a, b, !b) => if a { b } else { !b };
        {
            let mut v = fresh(a);
            v &= b;
            v |= a;
            v ^= true;
            v
        } => !((a & b) | a);
    );
}

/// Every target type, in `ScalarType::ALL`'s order, that `from` casts to
/// (a number does not cast to `bool`).
fn targets(from: ScalarType) -> Vec<ScalarType> {
    ScalarType::ALL
        .into_iter()
        .filter(|&t| t != ScalarType::Bool || from == ScalarType::Bool)
        .collect()
}

/// Casts of `$s` to every type, against Rust's `as` (`bool` goes through
/// `u8`, as Rust casts it only to integers: 0 or 1).
macro_rules! cast_case {
    ($s:ident, $inputs:expr, |$x:ident| $num:expr) => {{
        let from = ScalarType::of::<$s>();
        let staged = move |x: Dyn<$s>, out: Dyn<*mut u8>| {
            let v = DynValue::from(x);
            for (k, &t) in targets(from).iter().enumerate() {
                let c = v.cast(t);
                assert_eq!(c.ty(), t);
                put(out, k, c);
            }
        };
        let rust = move |($x, out): &mut ($s, Buf<u8>)| {
            let $x = *$x;
            let mut bytes = Vec::new();
            for t in targets(from) {
                match t {
                    ScalarType::Bool => slot(&mut bytes, ($num) as u8 != 0),
                    ScalarType::I8 => slot(&mut bytes, ($num) as i8),
                    ScalarType::I16 => slot(&mut bytes, ($num) as i16),
                    ScalarType::I32 => slot(&mut bytes, ($num) as i32),
                    ScalarType::I64 => slot(&mut bytes, ($num) as i64),
                    ScalarType::U8 => slot(&mut bytes, ($num) as u8),
                    ScalarType::U16 => slot(&mut bytes, ($num) as u16),
                    ScalarType::U32 => slot(&mut bytes, ($num) as u32),
                    ScalarType::U64 => slot(&mut bytes, ($num) as u64),
                    ScalarType::F32 => slot(&mut bytes, ($num) as f32),
                    ScalarType::F64 => slot(&mut bytes, ($num) as f64),
                }
            }
            out.0 = bytes;
        };
        let n = targets(from).len();
        let inputs: Vec<($s, Buf<u8>)> = $inputs
            .into_iter()
            .map(|x| (x, Buf(vec![0u8; 8 * n])))
            .collect();
        for check in backends() {
            check.run(concat!("dv_cast_", stringify!($s)), staged, rust, &inputs);
        }
    }};
}

/// Every cast between every pair of types is Rust's `as`: integers wrap
/// into narrower types, extend by their sign, convert to the nearest
/// float; floats truncate toward zero. Floats are cast from `[0, 128)`
/// only, where every integer type holds them (C leaves other float to
/// integer casts undefined; the interpreter reports them).
#[test]
#[augur::staged]
fn every_cast_between_every_pair_of_types_is_rusts() {
    cast_case!(bool, [false, true, false, true, true], |x| x as u8);
    cast_case!(i8, int_edges!(i8), |x| x);
    cast_case!(i16, int_edges!(i16), |x| x);
    cast_case!(i32, int_edges!(i32), |x| x);
    cast_case!(i64, int_edges!(i64), |x| x);
    cast_case!(u8, int_edges!(u8), |x| x);
    cast_case!(u16, int_edges!(u16), |x| x);
    cast_case!(u32, int_edges!(u32), |x| x);
    cast_case!(u64, int_edges!(u64), |x| x);
    let floats = [0.0, 0.75, 1.5, 42.9, 99.5, 127.875, 16.0];
    cast_case!(f32, floats.map(|f| f as f32), |x| x);
    cast_case!(f64, floats, |x| x);
}

/// A literal takes the other operand's type: the C is typed code's with
/// the literal of that type (`2` is `2.0` next to a `double`).
#[test]
#[augur::staged]
fn literals_take_the_other_operands_type() {
    let typed = |x: Dyn<f64>, n: Dyn<u8>| {
        let y = x * 2.0 - 1.0;
        let m = n + 200u8;
        Dyn::select(m.lt(7u8), y, 1.0 - y)
    };
    let dynamic = |x: Dyn<f64>, n: Dyn<u8>| {
        let (x, n) = (DynValue::from(x), DynValue::from(n));
        let y = x * 2 - 1;
        let m = n + 200;
        DynValue::select(m.lt(7), y, 1 - y).expect::<f64>()
    };
    let want = extract("lit_typed", typed).c_code();
    let got = extract("lit_dyn", dynamic).c_code();
    assert_eq!(got.replace("lit_dyn", "F"), want.replace("lit_typed", "F"));
    assert!(got.contains("arg0 * 2.0 - 1.0"), "{got}");
    // `as f32` rounding for a float literal next to an `f32`.
    let f = extract("lit_f32", |x: Dyn<f32>| {
        (DynValue::from(x) + 0.1).expect::<f32>()
    });
    assert_eq!(
        f.interpret(&[1.0f32.into()]).unwrap(),
        (1.0f32 + 0.1f32).into()
    );
    // An integer too large for an `f32` to hold exactly is no `f32`.
    let err = Builder::new()
        .extract("lit_big", |x: Dyn<f32>| {
            (DynValue::from(x) + 16_777_217).expect::<f32>()
        })
        .unwrap_err();
    assert_eq!(
        err.dsl_error::<TypeError>(),
        Some(&TypeError::Literal {
            op: "+",
            ty: ScalarType::F32,
            literal: "16777217i32".into()
        })
    );
}

/// The columns of a table at first-stage byte offsets of one buffer.
const ROWS: usize = 8;
const COLUMN_BYTES: usize = 8 * ROWS;
const QTY: usize = 0;
const PRICE: usize = 1;
const DISC: usize = 2;
const FLAG: usize = 3;

/// `select sum(price * (1 - disc)), count(*) where flag and qty < 24`,
/// and the column `price * (1 - disc)` into `out`; the sum in the price
/// column's type, returned as `f64`, the count at byte 64 of `out`. The
/// schema is first-stage data: one function per schema.
#[augur::staged]
fn query(schema: &[ScalarType], data: Dyn<*mut u8>, n: Dyn<i32>, out: Dyn<*mut u8>) -> Dyn<f64> {
    let cols: Vec<DynPtr> = schema
        .iter()
        .enumerate()
        .map(|(k, &ty)| DynPtr::from_raw(data.offset(k * COLUMN_BYTES), ty))
        .collect();
    let price_ty = schema[PRICE];
    let net_col = DynPtr::from_raw(out, price_ty);
    let sum = DynValue::named("sum", price_ty, 0);
    let count = Dyn::named("count", 0i64);
    let i = Dyn::named("i", 0);
    while i.lt(n).is_true() {
        let keep = cols[FLAG].load(i) & cols[QTY].load(i).lt(24);
        let net = cols[PRICE].load(i) * (1 - cols[DISC].load(i).cast(price_ty));
        net_col.store(i, net);
        if keep.is_true() {
            let mut s = sum;
            s += net;
            count.set(count + 1);
        }
        i.set(i + 1);
    }
    DynPtr::from_raw(out.offset(COLUMN_BYTES), ScalarType::I64).store(0, count);
    sum.cast(ScalarType::F64).expect::<f64>()
}

/// [`query`] over typed `Dyn`s, for the schema `[i32, f64, f32, bool]`.
#[augur::staged]
fn query_typed(data: Dyn<*mut u8>, n: Dyn<i32>, out: Dyn<*mut u8>) -> Dyn<f64> {
    let qty = data.offset(QTY * COLUMN_BYTES).cast_ptr::<*mut i32>();
    let price = data.offset(PRICE * COLUMN_BYTES).cast_ptr::<*mut f64>();
    let disc = data.offset(DISC * COLUMN_BYTES).cast_ptr::<*mut f32>();
    let flag = data.offset(FLAG * COLUMN_BYTES).cast_ptr::<*mut bool>();
    let net_col = out.cast_ptr::<*mut f64>();
    let sum = Dyn::named("sum", 0.0f64);
    let count = Dyn::named("count", 0i64);
    let i = Dyn::named("i", 0);
    while i.lt(n).is_true() {
        let keep = flag.at(i) & qty.at(i).lt(24);
        let net = price.at(i) * (1.0 - disc.at(i).cast::<f64>());
        net_col.at(i).set(net);
        if keep.is_true() {
            let mut s = sum;
            s += net;
            count.set(count + 1);
        }
        i.set(i + 1);
    }
    out.offset(COLUMN_BYTES)
        .cast_ptr::<*mut i64>()
        .at(0)
        .set(count);
    sum.cast::<f64>()
}

/// Reads row `i` of column `k` as `f64` (every value the tests write is
/// exact in it).
fn read(schema: &[ScalarType], data: &[u8], k: usize, i: usize) -> f64 {
    let ty = schema[k];
    let at = k * COLUMN_BYTES + i * ty.size() as usize;
    let b = &data[at..at + ty.size() as usize];
    match ty {
        ScalarType::Bool => b[0] as f64,
        ScalarType::I8 => i8::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::I16 => i16::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::I32 => i32::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::I64 => i64::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::U8 => b[0] as f64,
        ScalarType::U16 => u16::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::U32 => u32::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::U64 => u64::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::F32 => f32::from_ne_bytes(b.try_into().unwrap()) as f64,
        ScalarType::F64 => f64::from_ne_bytes(b.try_into().unwrap()),
    }
}

/// Writes `v` as a `ty` at byte `at`.
fn write(data: &mut [u8], at: usize, ty: ScalarType, v: f64) {
    let b = match ty {
        ScalarType::Bool => vec![(v != 0.0) as u8],
        ScalarType::I8 => (v as i8).to_ne_bytes().to_vec(),
        ScalarType::I16 => (v as i16).to_ne_bytes().to_vec(),
        ScalarType::I32 => (v as i32).to_ne_bytes().to_vec(),
        ScalarType::I64 => (v as i64).to_ne_bytes().to_vec(),
        ScalarType::U8 => (v as u8).to_ne_bytes().to_vec(),
        ScalarType::U16 => (v as u16).to_ne_bytes().to_vec(),
        ScalarType::U32 => (v as u32).to_ne_bytes().to_vec(),
        ScalarType::U64 => (v as u64).to_ne_bytes().to_vec(),
        ScalarType::F32 => (v as f32).to_ne_bytes().to_vec(),
        ScalarType::F64 => v.to_ne_bytes().to_vec(),
    };
    data[at..at + b.len()].copy_from_slice(&b);
}

/// [`query`] in plain Rust, in the price column's float type.
fn query_rust(schema: &[ScalarType], data: &[u8], n: i32, out: &mut [u8]) -> f64 {
    let f32s = schema[PRICE] == ScalarType::F32;
    // Rounds to the price type.
    let round = |v: f64| if f32s { v as f32 as f64 } else { v };
    let (mut sum, mut count) = (0.0f64, 0i64);
    for i in 0..n as usize {
        let keep = read(schema, data, FLAG, i) != 0.0 && read(schema, data, QTY, i) < 24.0;
        let disc = round(read(schema, data, DISC, i));
        let net = round(read(schema, data, PRICE, i) * round(1.0 - disc));
        write(out, i * schema[PRICE].size() as usize, schema[PRICE], net);
        if keep {
            sum = round(sum + net);
            count += 1;
        }
    }
    write(out, COLUMN_BYTES, ScalarType::I64, count as f64);
    sum
}

/// A table of up to `ROWS` random rows for `schema`, and `n`.
fn table_input(schema: &[ScalarType], rng: &mut Rng) -> (Buf<u8>, i32, Buf<u8>) {
    let mut data = vec![0u8; schema.len() * COLUMN_BYTES];
    let n = rng.below(ROWS as u64 + 1) as usize;
    for i in 0..n {
        let qty = rng.below(50) as f64;
        let price = (rng.below(10_000) as f64) / 4.0;
        let disc = (rng.below(10) as f64) / 16.0;
        let flag = rng.chance(70) as u8 as f64;
        for (k, v) in [(QTY, qty), (PRICE, price), (DISC, disc), (FLAG, flag)] {
            write(
                &mut data,
                k * COLUMN_BYTES + i * schema[k].size() as usize,
                schema[k],
                v,
            );
        }
    }
    (Buf(data), n as i32, Buf(vec![0u8; COLUMN_BYTES + 8]))
}

/// The query over several schemas, on C, the JIT and the interpreter,
/// against plain Rust; its C for `[i32, f64, f32, bool]` is typed code's.
#[test]
#[augur::staged]
fn a_schema_driven_query_is_rusts_and_typed_codes() {
    use ScalarType::*;
    let schemas: Vec<Vec<ScalarType>> = vec![
        vec![I32, F64, F32, Bool],
        vec![I64, F32, F32, Bool],
        vec![U16, F64, F64, Bool],
        vec![U8, F32, F64, Bool],
    ];
    let mut rng = Rng(0x00d7_a15e);
    for (s, schema) in schemas.iter().enumerate() {
        let inputs: Vec<_> = (0..12).map(|_| table_input(schema, &mut rng)).collect();
        let staged =
            |data: Dyn<*mut u8>, n: Dyn<i32>, out: Dyn<*mut u8>| query(schema, data, n, out);
        let rust = |(data, n, out): &mut (Buf<u8>, i32, Buf<u8>)| {
            query_rust(schema, &data.0, *n, &mut out.0)
        };
        for check in backends() {
            let ex = check.run(&format!("query{s}"), staged, rust, &inputs);
            if s == 0 {
                let typed = extract("query0", query_typed).c_code();
                assert_eq!(ex.c_code(), typed, "DynValue and typed C differ");
            }
        }
    }
}

/// Extracts `body` over an `i32`, an `f64` and a `u8` value and a byte
/// pointer (`DynValue`s and a `DynPtr` of `i32`) and asserts that it
/// fails with `want` at `line` of this file.
#[track_caller]
fn fails(line: u32, want: TypeError, body: impl Fn(DynValue, DynValue, DynValue, DynPtr) + Clone) {
    let err = Builder::new()
        .extract(
            "bad",
            move |i: Dyn<i32>, f: Dyn<f64>, u: Dyn<u8>, p: Dyn<*mut u8>| {
                let p = DynPtr::from_raw(p, ScalarType::I32);
                body(i.into(), f.into(), u.into(), p)
            },
        )
        .unwrap_err();
    match &err {
        Error::Dsl { location, .. } => {
            assert_eq!((location.file, location.line), (file!(), line), "{err}");
        }
        other => panic!("expected Error::Dsl, got {other:?}"),
    }
    assert_eq!(err.dsl_error::<TypeError>(), Some(&want), "{err}");
    assert!(err.to_string().contains(&want.to_string()), "{err}");
    assert!(
        err.to_string().contains(&format!("{}:{line}:", file!())),
        "{err}"
    );
}

fn mismatch(op: &'static str, left: ScalarType, right: ScalarType) -> TypeError {
    TypeError::Mismatch { op, left, right }
}

fn expected(op: &'static str, wanted: ScalarType, found: ScalarType) -> TypeError {
    TypeError::Expected { op, wanted, found }
}

fn unsupported(op: &'static str, ty: ScalarType, takes: &'static str) -> TypeError {
    TypeError::Unsupported { op, ty, takes }
}

fn literal(op: &'static str, ty: ScalarType, literal: &str) -> TypeError {
    TypeError::Literal {
        op,
        ty,
        literal: literal.into(),
    }
}

/// Each type error is a `TypeError` naming the operation and both types,
/// at the line of the operation.
#[test]
fn type_errors_name_the_types_and_the_users_line() {
    every_type_error();
}

/// One line per error: the line of the operation is `line!()`'s.
#[rustfmt::skip]
#[augur::staged]
fn every_type_error() {
    use ScalarType::*;
    let ints = "integers and bool";
    fails(line!(), mismatch("+", I32, F64), |i, f, _, _| { let _ = i + f; });
    fails(line!(), mismatch("-", F64, I32), |i, f, _, _| { let _ = f - i; });
    fails(line!(), mismatch("*", U8, I32), |i, _, u, _| { let _ = u * i; });
    fails(line!(), mismatch("lt", I32, U8), |i, _, u, _| { let _ = i.lt(u); });
    fails(line!(), mismatch("eq", F64, I32), |i, f, _, _| { let _ = f.eq(i); });
    fails(line!(), mismatch("&", I32, U8), |i, _, u, _| { let _ = i & u; });
    fails(line!(), mismatch("+=", I32, F64), |i, f, _, _| { let mut v = DynValue::new_var(I32, i); v += f; });
    fails(line!(), mismatch("select", I32, F64), |i, f, _, _| { let _ = DynValue::select(i.lt(0), i, f); });
    fails(line!(), unsupported("&", F64, ints), |_, f, _, _| { let _ = f & 1.5; });
    fails(line!(), unsupported("^", F64, ints), |_, f, _, _| { let _ = f ^ 1; });
    fails(line!(), unsupported("!", F64, ints), |_, f, _, _| { let _ = !f; });
    fails(line!(), unsupported("-", U8, "signed integers and floats"), |_, _, u, _| { let _ = -u; });
    fails(line!(), unsupported("%", F64, "integers (for floats: `augur::math::fmod`)"), |_, f, _, _| { let _ = f % f; });
    fails(line!(), unsupported("+", Bool, "numbers"), |i, _, _, _| { let b = i.lt(0); let _ = b + b; });
    fails(line!(), unsupported("<<", F64, "an integer shifted by an integer"), |_, f, _, _| { let _ = f << 1; });
    fails(line!(), unsupported("<<", F64, "an integer shifted by an integer"), |i, f, _, _| { let _ = i << f; });
    fails(line!(), unsupported("and", I32, "bool"), |i, _, _, _| { let _ = i.and(i.lt(0)); });
    fails(line!(), unsupported("is_true", I32, "bool (compare the value: `x.ne(0)`)"), |i, _, _, _| { let _ = i.is_true(); });
    fails(line!(), unsupported("cast to bool", F64, "bool (compare a number with zero instead: `x.ne(0)`)"), |_, f, _, _| { let _ = f.cast(Bool); });
    fails(line!(), unsupported("index", F64, "integers"), |_, f, _, p| { let _ = p.load(f); });
    fails(line!(), literal("+", U8, "300i32"), |_, _, u, _| { let _ = u + 300; });
    fails(line!(), literal("-", U8, "-1i32"), |_, _, u, _| { let _ = u - -1; });
    fails(line!(), literal("*", I32, "0.5f64"), |i, _, _, _| { let _ = i * 0.5; });
    fails(line!(), literal("-", I32, "1.5f64"), |i, _, _, _| { let _ = 1.5 - i; });
    fails(line!(), literal("lt", I32, "true"), |i, _, _, _| { let _ = i.lt(true); });
    fails(line!(), literal("new_var", I32, "1.5f64"), |_, _, _, _| { let _ = DynValue::new_var(I32, 1.5); });
    fails(line!(), literal("lit", U8, "256i32"), |_, _, _, _| { let _ = DynValue::lit(U8, 256); });
    fails(line!(), expected("set", I32, F64), |i, f, _, _| { DynValue::new_var(I32, i).set(f); });
    fails(line!(), expected("new_var", F64, I32), |i, _, _, _| { let _ = DynValue::new_var(F64, i); });
    fails(line!(), expected("store", I32, U8), |_, _, u, p| { p.store(0, u); });
    fails(line!(), expected("set", I32, F64), |_, f, _, p| { p.load(0).set(f); });
    fails(line!(), expected("select", Bool, I32), |i, _, _, _| { let _ = DynValue::select(i, i, i); });
    fails(line!(), expected("expect", I64, I32), |i, _, _, _| { let _ = i.expect::<i64>(); });
    fails(line!(), expected("expect", F64, I32), |_, _, _, p| { let _ = p.expect::<f64>(); });
}

/// `try_into` gives the typed handle or the error as a value, and ends
/// nothing.
#[test]
#[augur::staged]
fn try_into_gives_typed_handles_without_failing() {
    let seen = Cell::new(None);
    let f = extract("try_into", |x: Dyn<u32>, p: Dyn<*mut u32>| {
        let v = DynValue::from(x);
        let wrong: Result<Dyn<i32>, TypeError> = v.try_into();
        seen.set(wrong.err());
        let right: Dyn<u32> = v.try_into().expect("a u32");
        let ptr: Result<Dyn<*mut f32>, TypeError> = DynPtr::from(p).try_into();
        assert!(ptr.is_err());
        right + 1
    });
    assert_eq!(
        seen.take(),
        Some(TypeError::Expected {
            op: "try_into",
            wanted: ScalarType::I32,
            found: ScalarType::U32
        })
    );
    assert_eq!(
        f.interpret(&[41u32.into(), augur::Value::Ptr(0)]).unwrap(),
        42u32.into()
    );
}

/// `ScalarType::usual_arithmetic` is the type the C compiler gives `a + b`
/// for every pair of types (`_Generic` names it).
#[test]
fn usual_arithmetic_conversions_are_the_c_compilers() {
    let name = |t: ScalarType| t.rust_name();
    let mut c = String::from("#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n");
    c.push_str(
        "#define NAME(x) _Generic((x), bool: \"bool\", int8_t: \"i8\", int16_t: \"i16\", \
        int32_t: \"i32\", int64_t: \"i64\", uint8_t: \"u8\", uint16_t: \"u16\", uint32_t: \"u32\", \
        uint64_t: \"u64\", float: \"f32\", double: \"f64\", default: \"?\")\nint main(void) {\n",
    );
    for t in ScalarType::ALL {
        c.push_str(&format!("  {} v_{} = 0;\n", t.c_name(), name(t)));
    }
    let mut want = String::new();
    for a in ScalarType::ALL {
        for b in ScalarType::ALL {
            c.push_str(&format!("  puts(NAME(v_{} + v_{}));\n", name(a), name(b)));
            want.push_str(name(a.usual_arithmetic(b)));
            want.push('\n');
        }
    }
    c.push_str("  return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!("augur-usual-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("usual.c"), dir.join("usual"));
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = std::process::Command::new(cc)
        .args(["-std=c11", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run the C compiler");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = std::process::Command::new(&exe).output().expect("run it");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(String::from_utf8(ran.stdout).unwrap(), want);
}

/// `DynValue::promote` casts to that type, only the side that needs it,
/// and the values are C's (and Rust's `as`).
#[test]
#[augur::staged]
fn promote_converts_as_c_does() {
    let staged = |a: Dyn<i8>, b: Dyn<u32>, c: Dyn<i64>, d: Dyn<f32>| {
        let (a, b) = DynValue::promote(a.into(), b.into());
        assert_eq!((a.ty(), b.ty()), (ScalarType::U32, ScalarType::U32));
        let (s, c) = DynValue::promote(a + b, c.into());
        assert_eq!(s.ty(), ScalarType::I64);
        let (s, d) = DynValue::promote(s + c, d.into());
        (s * d).cast(ScalarType::F64).expect::<f64>()
    };
    let rust = |&mut (a, b, c, d): &mut (i8, u32, i64, f32)| {
        ((((a as u32).wrapping_add(b)) as i64).wrapping_add(c) as f32 * d) as f64
    };
    let inputs = [
        (-1i8, 1u32, 5i64, 0.5f32),
        (-128, 7, -9, 2.0),
        (3, u32::MAX, 1 << 40, -1.5),
        (0, 0, 0, 0.0),
        (127, 100, -(1 << 50), 0.25),
    ];
    for check in backends() {
        let ex = check.run("promote", staged, rust, &inputs);
        let code = ex.c_code();
        assert!(code.contains("(uint32_t)arg0 + arg1"), "{code}");
    }
}

/// Every operation a `DynValue` or `DynPtr` generates is at the user's
/// line (what source maps and errors name), none inside augur. Each
/// result is used twice, so each is a statement of its own, with its line.
#[test]
#[augur::staged]
fn generated_code_names_the_users_lines() {
    use augur::codegen::{CodegenOptions, LineMarkers};
    use ScalarType::*;
    let first = line!() + 2; // the closure's first line
    let ex = extract("lines", |p: Dyn<*mut u8>, n: Dyn<i32>| {
        let col = DynPtr::from_raw(p, F32);
        let twice = |v: DynValue| {
            col.store(0, v);
            col.offset(1).store(0, v);
        };
        let x = col.load(2);
        twice(x * 2);
        twice(-x);
        twice(2 - x);
        let mut acc = DynValue::new_var(F32, 0);
        acc += x;
        twice(DynValue::select(x.gt(1), acc, 0.5));
        let i = DynValue::from(n);
        let (a, b) = DynValue::promote(i, x);
        twice(a / b);
        let bits = ((i << 3) % 5) & !i;
        twice(bits.cast(F32));
        twice(i.lt(4).cast(F32));
        twice(col.load(i));
        let mut j = DynValue::new_var(I32, i);
        j <<= 2u8;
        twice(j.cast(F32));
    });
    let last = line!();
    let opts = CodegenOptions::default().with_line_markers(LineMarkers::Directives);
    let c = ex.c_code_with(&opts);
    let mut lines = std::collections::BTreeSet::new();
    // The others mark the lines of the generated file itself.
    let marks = c
        .lines()
        .filter(|l| l.starts_with("#line ") && !l.ends_with("AUGUR_GENERATED_FILE"));
    for l in marks {
        let n: u32 = l.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(l.ends_with(&format!("\"{}\"", file!())), "{l} in\n{c}");
        assert!((first..=last).contains(&n), "{l} in\n{c}");
        lines.insert(n);
    }
    assert!(lines.len() >= 10, "{lines:?} in\n{c}");
}
