/* clock.h — the one monotonic clock (seconds since an arbitrary origin,
 * CLOCK_MONOTONIC). Every deadline in the verifier and the back-ends is a
 * value of lg_now(). */
#ifndef LG_CLOCK_H
#define LG_CLOCK_H

double lg_now(void);

#endif
