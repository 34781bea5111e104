// Quantiles of Student's t distribution, from standard tables: the critical values of the
// step-based tests (cluster: is a rank's excess consistent; compare: is a delta beyond noise).
// With the few steps a profiler records (3-20), the normal quantile understates how far two
// means drift apart by chance; t at the samples' degrees of freedom does not.
#pragma once

#include <cstddef>

namespace rankscope {

// The 0.975 quantile (one-sided 2.5 %, two-sided 5 %) at `degrees_of_freedom` (>= 1).
double StudentT975(size_t degrees_of_freedom);

// The quantile with the normal distribution's three-sigma tail (0.99865, two-sided 0.27 %): the
// "three standard errors" of a band, at `degrees_of_freedom` (>= 1). It approaches 3.0 as the
// degrees of freedom grow (3.27 at 30, 3.06 at 120).
double StudentTThreeSigma(size_t degrees_of_freedom);

// Welch–Satterthwaite degrees of freedom of the difference of two means, from each sample's
// variance and size. A sample of one step adds no variance and no degrees of freedom; with no
// variance at all the result is huge (the normal limit).
double WelchDegreesOfFreedom(double variance_a, size_t n_a, double variance_b, size_t n_b);

}  // namespace rankscope
