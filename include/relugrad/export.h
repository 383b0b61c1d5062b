/* Symbol visibility for the relugrad library (built with hidden visibility). */
#ifndef RELUGRAD_EXPORT_H_
#define RELUGRAD_EXPORT_H_

#if defined(_WIN32)
#define RELUGRAD_API
#else
#define RELUGRAD_API __attribute__((visibility("default")))
#endif

#endif /* RELUGRAD_EXPORT_H_ */
