//! `printf` and the other output functions, against strings glibc prints.

use super::super::memory::Memory;
use super::super::printf::format;
use super::*;
use Value as V;

/// What `printf(fmt, args...)` writes.
fn pf(fmt: &str, args: &[Value]) -> String {
    let mut m = Memory::new();
    let args: Vec<Value> = args
        .iter()
        .map(|&a| match a {
            // Tests pass strings as literals through this marker.
            V::Ptr(u64::MAX) => m.alloc_cstr("hello"),
            a => a,
        })
        .collect();
    String::from_utf8(format(&m, fmt.as_bytes(), &args).unwrap()).unwrap()
}

fn pf_err(fmt: &str, args: &[Value]) -> String {
    format(&Memory::new(), fmt.as_bytes(), args)
        .unwrap_err()
        .to_string()
}

const HELLO: Value = V::Ptr(u64::MAX);

#[test]
fn integers() {
    assert_eq!(
        pf(
            "%d|%i|%5d|%-5d|%05d",
            &[V::I32(-42), V::I32(7), V::I32(42), V::I32(42), V::I32(-42)]
        ),
        "-42|7|   42|42   |-0042"
    );
    assert_eq!(
        pf("%+d|% d|%+d", &[V::I32(5), V::I32(5), V::I32(-5)]),
        "+5| 5|-5"
    );
    assert_eq!(
        pf(
            "%.3d|%8.3d|%-8.3d|%08.3d",
            &[V::I32(7), V::I32(-7), V::I32(7), V::I32(7)]
        ),
        "007|    -007|007     |     007"
    );
    assert_eq!(pf("%.0d|%5.0d|", &[V::I32(0), V::I32(0)]), "|     |");
    assert_eq!(
        pf("%u|%u", &[V::U32(u32::MAX), V::I32(-1)]),
        "4294967295|4294967295"
    );
    assert_eq!(
        pf(
            "%ld|%lld|%lu|%llu",
            &[V::I64(i64::MIN), V::I64(-1), V::U64(u64::MAX), V::I64(-1)]
        ),
        "-9223372036854775808|-1|18446744073709551615|18446744073709551615"
    );
    assert_eq!(
        pf(
            "%x|%X|%#x|%#X|%#x|%08x|%#010x",
            &[
                V::I32(255),
                V::I32(255),
                V::I32(255),
                V::I32(255),
                V::I32(0),
                V::U32(0xbeef),
                V::U32(0xbeef)
            ]
        ),
        "ff|FF|0xff|0XFF|0|0000beef|0x0000beef"
    );
    assert_eq!(
        pf(
            "%lx|%o|%#o|%#o",
            &[V::U64(u64::MAX), V::I32(8), V::I32(8), V::I32(0)]
        ),
        "ffffffffffffffff|10|010|0"
    );
    assert_eq!(
        pf("%hhd|%hd|%hhu", &[V::I32(255), V::I32(65535), V::I32(-1)]),
        "-1|-1|255"
    );
    assert_eq!(
        pf("%d %d %d", &[V::I8(-1), V::U16(65535), V::Bool(true)]),
        "-1 65535 1"
    );
    assert_eq!(
        pf(
            "%*d|%-*d|%.*d",
            &[
                V::I32(4),
                V::I32(1),
                V::I32(3),
                V::I32(2),
                V::I32(3),
                V::I32(5)
            ]
        ),
        "   1|2  |005"
    );
    assert_eq!(pf("%*d|", &[V::I32(-4), V::I32(1)]), "1   |");
}

#[test]
fn characters_strings_pointers() {
    assert_eq!(
        pf(
            "%c%c|%3c|%-3c|",
            &[V::I32(104), V::Char(105), V::I32(120), V::I32(121)]
        ),
        "hi|  x|y  |"
    );
    assert_eq!(
        pf(
            "%s|%8s|%-8s|%.3s|%8.2s",
            &[HELLO, HELLO, HELLO, HELLO, HELLO]
        ),
        "hello|   hello|hello   |hel|      he"
    );
    assert_eq!(pf("100%% %p", &[V::Ptr(0)]), "100% (nil)");
    assert_eq!(
        pf("%p|%8p", &[V::Ptr(0x1_0000_0010), V::Ptr(0)]),
        "0x100000010|   (nil)"
    );
}

#[test]
fn floats() {
    assert_eq!(
        pf(
            "%f|%.2f|%10.3f|%-10.1f|%010.2f",
            &[
                V::F64(2.34567),
                V::F64(2.005),
                V::F64(-1.5),
                V::F64(1.25),
                V::F64(-3.5)
            ]
        ),
        "2.345670|2.00|    -1.500|1.2       |-000003.50"
    );
    assert_eq!(
        pf(
            "%.0f|%.0f|%.0f|%#.0f",
            &[V::F64(0.5), V::F64(1.5), V::F64(2.5), V::F64(2.0)]
        ),
        "0|2|2|2."
    );
    assert_eq!(
        pf(
            "%e|%.2e|%E|%.0e",
            &[
                V::F64(12345.678),
                V::F64(-0.000123),
                V::F64(0.0),
                V::F64(5e300)
            ]
        ),
        "1.234568e+04|-1.23e-04|0.000000E+00|5e+300"
    );
    assert_eq!(
        pf(
            "%g|%g|%g|%g|%g",
            &[
                V::F64(100000.0),
                V::F64(1e6),
                V::F64(0.0001),
                V::F64(0.00001),
                V::F64(1.5)
            ]
        ),
        "100000|1e+06|0.0001|1e-05|1.5"
    );
    assert_eq!(
        pf(
            "%.3g|%#g|%.10g|%G|%g",
            &[
                V::F64(2.34567),
                V::F64(1.0),
                V::F64(0.1),
                V::F64(1e-10),
                V::F64(-0.0)
            ]
        ),
        "2.35|1.00000|0.1|1E-10|-0"
    );
    assert_eq!(
        pf(
            "%f|%F|%5.1f|%+f|%e|%010f",
            &[
                V::F64(f64::INFINITY),
                V::F64(f64::NEG_INFINITY),
                V::F64(f64::NAN),
                V::F64(f64::INFINITY),
                V::F64(-f64::NAN),
                V::F64(f64::INFINITY)
            ]
        ),
        "inf|-INF|  nan|+inf|-nan|       inf"
    );
    // A float argument is promoted to double.
    assert_eq!(pf("%f %g", &[V::F32(0.1), V::F32(1e-3)]), "0.100000 0.001");
    assert_eq!(pf("%.20f", &[V::F64(0.1)]), "0.10000000000000000555");
}

#[test]
fn mismatched_arguments_are_errors() {
    assert!(pf_err("%d", &[V::I64(1)]).contains("expects an int argument, got i64"));
    assert!(pf_err("%ld", &[V::I32(1)]).contains("64-bit"));
    assert!(pf_err("%f", &[V::I32(1)]).contains("expects a double"));
    assert!(pf_err("%d %d", &[V::I32(1)]).contains("too few arguments"));
    assert!(pf_err("%s", &[V::Ptr(0)]).contains("null pointer"));
    assert!(pf_err("%a", &[V::F64(1.0)]).contains("unsupported conversion"));
}

#[test]
fn printf_puts_putchar_through_the_interpreter() {
    // for i in 0..3 { printf("%d:%s ", i, "x") } puts("end"); putchar(0xc3); putchar(0xa9)
    let mut b = B::new(Type::Void);
    let i = b.local("i", I32);
    let (iv, x) = (b.v(i), b.str("x"));
    let call = b.printf("%d:%s ", &[iv, x]);
    let three = b.i32(3);
    let lp = count(&mut b, i, three, vec![eval(call)]);
    let end = b.str("end");
    let puts = b.call("puts", &[ptr(CHAR)], I32, &[end]);
    let (c1, c2) = (b.i32(0xc3), b.i32(0xa9));
    let p1 = b.call("putchar", &[I32], I32, &[c1]);
    let p2 = b.call("putchar", &[I32], I32, &[c2]);
    let f = b.build(vec![lp, eval(puts), eval(p1), eval(p2)]);
    let mut it = Interpreter::new();
    it.call(&f, &[]).unwrap();
    assert_eq!(it.output(), "0:x 1:x 2:x end\né");
    assert_eq!(it.take_output(), "0:x 1:x 2:x end\né");
    assert_eq!(it.output(), "");
}

#[test]
fn math_builtins() {
    let mut b = B::new(F64);
    let x = b.param("x", F64);
    let xv = b.v(x);
    let sq = b.call("sqrt", &[F64], F64, &[xv]);
    let xv = b.v(x);
    let two = b.c(Const::F64(2.0), F64);
    let pw = b.call("pow", &[F64, F64], F64, &[xv, two]);
    let sum = b.bin(BinOp::Add, sq, pw);
    let fl = b.call("floor", &[F64], F64, &[sum]);
    let f = b.build(vec![ret(fl)]);
    assert_eq!(run(&f, &[V::F64(16.0)]).unwrap(), V::F64(260.0));
}
