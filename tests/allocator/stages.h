/* A barrier by numbered stages for the test programs whose threads take turns: a
 * thread waits until the stage reaches s; another sets it (and wakes every waiter). */
#ifndef HS_TEST_STAGES_H
#define HS_TEST_STAGES_H
#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;

static void wait_stage(int s) {
  pthread_mutex_lock(&mu);
  while (stage < s) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

static void set_stage(int s) {
  pthread_mutex_lock(&mu);
  stage = s;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}
#endif
