/* fork while other threads allocate: the child must be able to allocate, start
 * a thread, free blocks the parent's threads made, and exit; the parent must
 * carry on. Prints "ok forks=<n>" or exits non-zero (a deadlock is caught by
 * the caller's timeout). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 256
static void *_Atomic shared[SLOTS];
static atomic_int stop;

static void *churn(void *arg) {
  unsigned s = (unsigned)(size_t)arg;
  while (!atomic_load(&stop)) {
    s = s * 1103515245u + 12345u;
    size_t size = (s >> 8) % 100 == 0 ? 200000 + (s % 3) * 1000000
                                      : 16 + (s >> 16) % 2000;
    void *p = malloc(size);
    if (p == NULL)
      abort();
    memset(p, 1, 16);
    void *old = atomic_exchange(&shared[(s >> 4) % SLOTS], p);
    free(old);
  }
  return NULL;
}

static void *child_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++)
    free(malloc(64 + i));
  return malloc(100);
}

int main(int argc, char **argv) {
  int forks = argc > 1 ? atoi(argv[1]) : 100;
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, churn, (void *)(size_t)(i + 1));
  for (int n = 0; n < forks; n++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      for (int i = 0; i < SLOTS; i++)
        free(atomic_exchange(&shared[i], NULL)); /* parent threads' blocks */
      pthread_t c;
      void *r;
      if (pthread_create(&c, NULL, child_thread, NULL) != 0)
        _exit(3);
      pthread_join(c, &r);
      free(r);
      char *s = malloc(3 << 20);
      if (s == NULL)
        _exit(4);
      memset(s, 2, 3 << 20);
      free(s);
      _exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      fprintf(stderr, "child %d failed (status %d)\n", n, status);
      return 1;
    }
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < SLOTS; i++)
    free(atomic_exchange(&shared[i], NULL));
  printf("ok forks=%d\n", forks);
  return 0;
}
