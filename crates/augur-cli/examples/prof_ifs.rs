use augur::{range, Builder, Dyn};
fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(128);
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(20);
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let e = Builder::new()
            .extract("ifs", move |x: Dyn<i64>| {
                let y = Dyn::new(0i64);
                for k in range(0..n) {
                    if x.lt(k).is_true() {
                        y.set(y + 1);
                    }
                }
                y
            })
            .unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        best = best.min(ms);
        std::hint::black_box(&e);
        if reps == 1 {
            eprintln!("{:?}", e.stats());
        }
    }
    println!("n={n} best {best:.3} ms");
}
