// What ML-DSA marks public on purpose for the constant-time check (the hook is ../declassify.hpp;
// the check is tests/ct/ct_mldsa.cpp, docs/crypto.md "Constant time").
#pragma once

#include <cstddef>

#include "../declassify.hpp"

namespace pqot::crypto::mldsa {

// The complete list of what ML-DSA declassifies, and why each item is safe. Everything else
// computed from xi, rho', K, s1, s2, t0, rnd or mu is handled without secret-dependent branches or
// memory indices (checked by valgrind memcheck).
//
// 1. rho (KeyGen, Algorithm 6 line 1; Sign, Algorithm 7 line 1 via skDecode). It is the first field
//    of the public key. ExpandA's rejection sampling (Algorithm 30) then runs on public data.
//
// 2. Each accept/reject decision of RejBoundedPoly (ExpandS, Algorithms 31 and 33; KeyGen
//    line 4), not the nibble values and not the coefficients. Why this is safe: the nibbles are
//    independent and uniform (H modelled as a random oracle / PRF on the secret rho'). Whether a
//    nibble b is accepted is [b < 15] (eta = 2) or [b < 9] (eta = 4); conditioned on any
//    accept/reject pattern, the accepted nibbles are still independent and uniform on {0..14} or
//    {0..8}, so the coefficients eta - (b mod 5) or eta - b have exactly their unconditioned
//    distribution. The pattern (and so the number of draws and the time taken) is independent of s1
//    and s2. What it does reveal is the value range of the rejected nibbles, which are discarded.
//
// 3. c~ of every signing attempt, accepted or rejected (Algorithm 7 line 15), and hence the
//    positions and signs SampleInBall (Algorithm 29) derives from it. For the accepted attempt c~
//    is the first field of the signature. For a rejected attempt: c~ = H(mu || w1Encode(w1)) with
//    w1 = HighBits(A_hat y); neither input involves s1, s2 or t0 (y is drawn from rho'' alone), so
//    c~ itself is computed without the key. What the pair (c, verdict) of a rejected attempt
//    reveals is not nothing: the r0 and hint verdicts depend on c s2 and c t0. Safety rests on
//    publishing only that one verdict bit (item 4) and never z, r0, ct0 or h of a rejected
//    attempt: with the rejected response also leaked, the key can be recovered (Karabulut et al.,
//    HOST 2021; Zhou, Wang, Sun, Yu, TCHES 2025(4), ePrint 2025/214). This is the argument of the
//    Dilithium round-3 specification, section 5.5; mldsa-native declassifies c~ of every attempt
//    on the same ground. Avoiding it would mean a constant-time SampleInBall over a bounded SHAKE
//    stream for every attempt.
//
// 4. The verdicts of the rejection tests of the signing loop (Algorithm 7 lines 23 and 28): one bit
//    for "||z||inf >= gamma1 - beta or ||r0||inf >= gamma2 - beta" and one for
//    "||ct0||inf >= gamma2 or more than omega hints". The norms and the hint count are computed
//    without branches (poly_exceeds, poly_make_hint); only the bits are declassified. Which attempt
//    succeeds (and so the number of attempts and the counter kappa) is visible in the running time
//    of any implementation of Fiat-Shamir with aborts; the security analysis (round-3
//    specification, section 5.5) treats it as public and only requires that z, r0, ct0 and h of a
//    rejected candidate stay hidden - they are wiped and never declassified. Our verdicts are
//    coarser than the reference code's (which even reveals which test failed).
//
// 5. z and h of the accepted attempt (Algorithm 7 line 33): they are fields of the signature, and
//    the hint positions are written with a branch on each h_i (HintBitPack, Algorithm 20).
using crypto::declassify;

}  // namespace pqot::crypto::mldsa
