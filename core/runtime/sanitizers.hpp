// Whether this build runs under AddressSanitizer or ThreadSanitizer, whose
// shadow memory and own crash handling change what a process may assume.
// GCC defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang answers
// __has_feature instead.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ACCEL_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ACCEL_UNDER_SANITIZER 1
#endif
#endif
#ifndef ACCEL_UNDER_SANITIZER
#define ACCEL_UNDER_SANITIZER 0
#endif
