// An engine worker thread (dist/engineThread.js): instantiates the kernel module on the engine's shared
// memory and runs its part of each parallel call (threadPool.ts) until the pool stops.
import { parentPort, workerData } from 'node:worker_threads';
import { threadLoop } from './threadPool';

const data = workerData as { memory: { buffer: SharedArrayBuffer }; module: object; tid: number };
threadLoop(data.memory, data.module, data.tid, () => parentPort?.postMessage('ready'));
