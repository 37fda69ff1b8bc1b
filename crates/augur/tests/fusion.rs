//! scratch
mod common;

use augur::prophecy::{Flat, Prophecy};
use augur::{Builder, Dyn, ProphecyMode};
use common::{count, extract_with, Buf, Check};

const FILTER: [f32; 3] = [0.5, -0.25, 1.0];

#[derive(Default)]
struct Net {
    last_conv: Option<Prophecy<Flat<f32>>>,
}

fn relu_of(v: Dyn<f32>, t: f32) -> Dyn<f32> {
    Dyn::if_else(v.gt(t), || v, || Dyn::lit(0.0))
}

impl Net {
    #[track_caller]
    fn follow(&mut self, op: Flat<f32>) -> Option<Prophecy<Flat<f32>>> {
        let p = self.last_conv.take()?;
        p.require(op);
        Some(p)
    }

    #[track_caller]
    fn conv(&mut self, x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>) {
        self.follow(Flat::Conflict);
        let next = Prophecy::named("after conv", Flat::Unknown);
        let fused = next.get().exactly().copied();
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            let sum = Dyn::new(0.0f32);
            for (j, &w) in FILTER.iter().enumerate() {
                sum.set(sum + x.at(i + j as i32) * w);
            }
            let out = match fused {
                Some(t) => relu_of(sum, t),
                None => sum,
            };
            y.at(i).set(out);
            i.set(i + 1);
        }
        self.last_conv = Some(next);
    }

    #[track_caller]
    fn relu(&mut self, y: Dyn<*mut f32>, n: Dyn<i32>, t: f32) {
        if let Some(p) = self.follow(Flat::Exactly(t)) {
            if p.get() == Flat::Exactly(t) {
                return;
            }
        }
        let i = Dyn::new(0);
        while i.lt(n).is_true() {
            y.at(i).set(relu_of(y.at(i), t));
            i.set(i + 1);
        }
    }
}

#[test]
fn scratch() {
    for mode in [ProphecyMode::Paper, ProphecyMode::Collect] {
        let b = Builder::new().prophecy_mode(mode);
        let ex = extract_with(
            &b,
            "t1",
            |x: Dyn<*mut f32>, y: Dyn<*mut f32>, n: Dyn<i32>| {
                let mut net = Net::default();
                net.conv(x, y, n);
                net.relu(y, n, 1.35);
            },
        );
        println!("{}\n{:?}\n{}", ex.c_code(), ex.stats(), ex.explain());
    }
    let _ = (count, Buf(vec![0.0f32]), Check::default());
}
