//! The subset of rustfft 6's API that tract-core and tract-onnx-opl use, as a direct O(n²) DFT (see README.md).
//!
//! Conventions are rustfft's: forward `X[k] = Σ_j x[j]·e^(−2πi·jk/n)`, inverse with `+i`, neither normalised.
//! `process` transforms a buffer holding one or more transforms of the planned length, back to back.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::Arc;

pub use num_complex;
pub use num_traits;

use num_complex::Complex;
use num_traits::{FromPrimitive, Signed, Zero};

/// The element types a transform works on (rustfft's bound, with the same blanket implementation).
pub trait FftNum: Copy + FromPrimitive + Signed + Sync + Send + Debug + 'static {}

impl<T> FftNum for T where T: Copy + FromPrimitive + Signed + Sync + Send + Debug + 'static {}

/// Sign of the exponent: forward `−`, inverse `+`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FftDirection {
    Forward,
    Inverse,
}

/// A planned transform of one length and direction.
pub trait Fft<T: FftNum>: Sync + Send {
    /// The transform length `n`.
    fn len(&self) -> usize;
    /// Whether there is nothing to transform (`n == 0`).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn fft_direction(&self) -> FftDirection;
    /// Transforms `buffer` in place, `buffer.len() / n` transforms back to back.
    ///
    /// # Panics
    /// When `buffer.len()` is not a multiple of `n` (as rustfft does).
    fn process(&self, buffer: &mut [Complex<T>]);
}

/// Plans transforms. Unlike rustfft's planner it keeps no cache: planning is O(n) (the twiddle table).
pub struct FftPlanner<T: FftNum> {
    _element: PhantomData<T>,
}

impl<T: FftNum> Default for FftPlanner<T> {
    fn default() -> Self {
        FftPlanner::new()
    }
}

impl<T: FftNum> FftPlanner<T> {
    pub fn new() -> Self {
        FftPlanner {
            _element: PhantomData,
        }
    }

    pub fn plan_fft(&mut self, len: usize, direction: FftDirection) -> Arc<dyn Fft<T>> {
        Arc::new(Dft::new(len, direction))
    }

    pub fn plan_fft_forward(&mut self, len: usize) -> Arc<dyn Fft<T>> {
        self.plan_fft(len, FftDirection::Forward)
    }

    pub fn plan_fft_inverse(&mut self, len: usize) -> Arc<dyn Fft<T>> {
        self.plan_fft(len, FftDirection::Inverse)
    }
}

/// The direct DFT: `twiddles[m] = e^(∓2πi·m/n)`, so the term of `x[j]` in `X[k]` uses `twiddles[(j·k) mod n]`.
struct Dft<T> {
    direction: FftDirection,
    twiddles: Vec<Complex<T>>,
}

impl<T: FftNum> Dft<T> {
    fn new(len: usize, direction: FftDirection) -> Self {
        let sign = match direction {
            FftDirection::Forward => -1.0,
            FftDirection::Inverse => 1.0,
        };
        let cast = |v: f64| T::from_f64(v).unwrap_or_else(T::zero);
        let twiddles = (0..len)
            .map(|m| {
                let angle = sign * 2.0 * std::f64::consts::PI * m as f64 / len as f64;
                Complex::new(cast(angle.cos()), cast(angle.sin()))
            })
            .collect();
        Dft {
            direction,
            twiddles,
        }
    }
}

impl<T: FftNum> Fft<T> for Dft<T> {
    fn len(&self) -> usize {
        self.twiddles.len()
    }

    fn fft_direction(&self) -> FftDirection {
        self.direction
    }

    fn process(&self, buffer: &mut [Complex<T>]) {
        let n = self.twiddles.len();
        if n == 0 {
            return;
        }
        assert!(
            buffer.len().is_multiple_of(n),
            "buffer of {} is not a whole number of transforms of length {n}",
            buffer.len()
        );
        let mut out = vec![Complex::zero(); n];
        for chunk in buffer.chunks_exact_mut(n) {
            for (k, o) in out.iter_mut().enumerate() {
                let mut acc = Complex::zero();
                for (j, x) in chunk.iter().enumerate() {
                    acc = acc + *x * self.twiddles[(j * k) % n];
                }
                *o = acc;
            }
            chunk.copy_from_slice(&out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[Complex<f64>], b: &[Complex<f64>]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).norm() < 1e-9)
    }

    #[test]
    fn a_known_transform() {
        let mut x: Vec<Complex<f64>> = [1.0, 2.0, 3.0, 4.0]
            .iter()
            .map(|&r| Complex::new(r, 0.0))
            .collect();
        FftPlanner::new().plan_fft_forward(4).process(&mut x);
        let want = [
            Complex::new(10.0, 0.0),
            Complex::new(-2.0, 2.0),
            Complex::new(-2.0, 0.0),
            Complex::new(-2.0, -2.0),
        ];
        assert!(close(&x, &want), "{x:?}");
    }

    #[test]
    fn impulse_and_constant() {
        let n = 7;
        let mut impulse = vec![Complex::<f64>::zero(); n];
        impulse[0] = Complex::new(1.0, 0.0);
        FftPlanner::new().plan_fft_forward(n).process(&mut impulse);
        assert!(close(&impulse, &vec![Complex::new(1.0, 0.0); n]));
        let mut constant = vec![Complex::new(1.0, 0.0); n];
        FftPlanner::new().plan_fft_inverse(n).process(&mut constant);
        let mut want = vec![Complex::<f64>::zero(); n];
        want[0] = Complex::new(n as f64, 0.0);
        assert!(close(&constant, &want));
    }

    #[test]
    fn inverse_of_forward_is_n_times_the_input_for_each_transform_in_the_buffer() {
        let n = 12;
        let x: Vec<Complex<f64>> = (0..3 * n)
            .map(|i| Complex::new((i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()))
            .collect();
        let mut planner = FftPlanner::new();
        let mut y = x.clone();
        planner.plan_fft_forward(n).process(&mut y);
        planner.plan_fft(n, FftDirection::Inverse).process(&mut y);
        let scaled: Vec<Complex<f64>> = x.iter().map(|v| v * n as f64).collect();
        assert!(close(&y, &scaled));
    }

    #[test]
    fn f32_matches_f64() {
        let x: Vec<Complex<f64>> = (0..16)
            .map(|i| Complex::new(i as f64, -(i as f64)))
            .collect();
        let mut x32: Vec<Complex<f32>> = x
            .iter()
            .map(|v| Complex::new(v.re as f32, v.im as f32))
            .collect();
        let mut x64 = x;
        FftPlanner::new().plan_fft_forward(16).process(&mut x64);
        FftPlanner::new().plan_fft_forward(16).process(&mut x32);
        assert!(x64
            .iter()
            .zip(&x32)
            .all(|(a, b)| (a.re - b.re as f64).abs() < 1e-3 && (a.im - b.im as f64).abs() < 1e-3));
    }

    #[test]
    #[should_panic(expected = "not a whole number of transforms")]
    fn a_ragged_buffer_is_refused() {
        let mut x = vec![Complex::<f32>::zero(); 5];
        FftPlanner::new().plan_fft_forward(2).process(&mut x);
    }
}
