use augur::{range, Builder, Dyn, Static};

#[test]
fn smoke() {
    let b = Builder::new();
    let f = b
        .extract("f", |x: Dyn<i32>, n: Dyn<i32>| {
            let r = Dyn::new(0);
            let i = Dyn::new(0);
            while i.lt(n).is_true() {
                if x.gt(i).is_true() {
                    r.set(r + i);
                } else {
                    r.set(r - 1);
                }
                i.set(i + 1);
            }
            r
        })
        .unwrap();
    println!("{}", f.ir());
    println!("{}", f.c_code());
    println!("{}", f.stats());
    let g = b
        .extract("g", |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for k in range(0..3) {
                if x.gt(k).is_true() {
                    r.set(r + 1);
                }
            }
            let mut s = Static::new(0);
            for _ in 0..4 {
                r.set(r * 2);
                s += 1;
            }
            r
        })
        .unwrap();
    println!("{}", g.c_code());
    println!("{}", g.stats());
    let h = b
        .extract("h", |x: Dyn<i32>| {
            let r = Dyn::new(0);
            for k in 0..3 {
                if x.gt(k).is_true() {
                    r.set(r + 1);
                }
            }
            r
        })
        .unwrap();
    println!("{}", h.c_code());
    println!("{}", h.stats());
    let c = f.compile().unwrap();
    let v = unsafe { (c.get())(5, 10) };
    println!("{v}");
}
