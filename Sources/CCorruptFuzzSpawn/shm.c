// Shared memory for coverage maps (CCorruptFuzzSpawn.h).
#include "CCorruptFuzzSpawn.h"

#include <errno.h>
#include <sys/ipc.h>
#include <sys/shm.h>

void *cf_shm_create(size_t size, int *id) {
    int made = shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | 0600);
    if (made < 0) return NULL;
    void *segment = shmat(made, NULL, 0);
    if (segment == (void *)-1) {
        int saved = errno;
        shmctl(made, IPC_RMID, NULL);
        errno = saved;
        return NULL;
    }
#if defined(__linux__)
    // Linux lets other processes attach a segment marked for removal until the last detaches.
    shmctl(made, IPC_RMID, NULL);
#endif
    // A new segment is zero-filled by the system (shmget); its pages cost memory once written.
    *id = made;
    return segment;
}

void cf_shm_release(void *segment, int id) {
    if (segment) shmdt(segment);
#if !defined(__linux__)
    shmctl(id, IPC_RMID, NULL);
#else
    (void)id;
#endif
}
