use augur::{Builder, Dyn};
#[augur::staged]
fn main() {
    let n: usize = std::env::args().nth(1).map_or(2048, |s| s.parse().unwrap());
    let reps: usize = std::env::args().nth(2).map_or(20, |s| s.parse().unwrap());
    let b = Builder::new();
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let f = b
            .extract("s", |x: Dyn<i32>| {
                for _ in 0..n {
                    x.set(x + 1);
                }
                x
            })
            .unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(f);
    }
    println!("n={n} best {:.3} ms", best * 1e3);
}
