// Clang's thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html),
// so the compiler checks which lock guards which member. The `thread-safety` preset builds
// with clang and -Wthread-safety -Werror (CI runs it); under GCC the macros are empty.
//
// Annotate members with GUARDED_BY(mu_) and functions that expect a lock with REQUIRES(mu_).
// The standard library's std::mutex carries no annotations, so locks that guard annotated
// members are pagereel::Mutex (base/mutex.h).
#ifndef PAGEREEL_BASE_THREAD_ANNOTATIONS_H_
#define PAGEREEL_BASE_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define PR_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define PR_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) PR_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY PR_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) PR_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) PR_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) PR_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) PR_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) PR_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) PR_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) PR_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) PR_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) PR_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) PR_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) PR_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS PR_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // PAGEREEL_BASE_THREAD_ANNOTATIONS_H_
