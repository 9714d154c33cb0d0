// The learning-rate schedule: a linear warm-up, then constant or a linear or cosine decay to
// minLrRatio at the run's last optimizer step. A multiplier of the peak learning rate, by step (1-based).
import type { AlgorithmSettings } from '../../shared/algorithm';

export function lrMultiplier(step: number, a: Pick<AlgorithmSettings, 'warmupSteps' | 'lrSchedule' | 'minLrRatio'>, totalSteps: number): number {
  if (step <= a.warmupSteps) return step / Math.max(1, a.warmupSteps);
  if (a.lrSchedule === 'constant' || totalSteps <= a.warmupSteps) return 1;
  const progress = Math.min(1, (step - a.warmupSteps) / Math.max(1, totalSteps - a.warmupSteps));
  const decay = a.lrSchedule === 'linear' ? 1 - progress : 0.5 * (1 + Math.cos(Math.PI * progress));
  return a.minLrRatio + (1 - a.minLrRatio) * decay;
}
