// The frozen teacher of on-policy distillation (issue 51): a language model read from a Hugging Face
// folder through createPolicy's own pieces (the folder's config, the compute path chosen once with its
// reason, the path's memory plan, checked before a weight is read), never trained, that scores the
// student's sampled token ids exactly as the learner's reference pass scores them (token in, token out:
// the ids are never decoded and re-encoded), one forward pass per sequence, batched. Its memory plan is
// its own: it never samples, so it plans one row of KV cache, and it holds its weights as a fully
// fine-tuned model does (float32 on the engine).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TransformerOptions } from '../../shared/runConfig';
import type { TeacherScorer } from '../algo/distill';
import { shardLogprobs, type Trainable } from '../algo/gradients';
import type { TrainSequence } from '../algo/trainSequence';
import { chooseComputePath, enginePath, tfjsPath, type ComputePath, type ModelSource, type PathModel } from './computePath';
import { modelSource, type PolicyRunInfo } from './createPolicy';
import { readCheckpoint } from './lm/checkpoint';
import { ModelLoadError } from './lm/models/hfConfig';
import { initBackend } from './lm/models/tfjsBackend';
import { tokenizerOf } from './policyStages';

/**
 * What makes token ids mean the same text in a tokenizer.json: the model's vocabulary, merges and
 * type, the added tokens with their ids, and the decoder. A digest of those, so that two folders with
 * byte-different files (another key order, another normaliser for encoding) still compare equal
 * where ids decode alike.
 */
export function tokenizerIdentity(dir: string): string {
  const file = path.join(dir, 'tokenizer.json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ModelLoadError(
      `${file}: cannot read it as JSON (${(e as Error).message}). Fix: point at a Hugging Face checkpoint folder with its tokenizer.json`,
    );
  }
  const t = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const m = (typeof t.model === 'object' && t.model !== null ? t.model : {}) as Record<string, unknown>;
  const added = Array.isArray(t.added_tokens)
    ? (t.added_tokens as unknown[]).map((a) =>
        typeof a === 'object' && a !== null ? [(a as Record<string, unknown>).id, (a as Record<string, unknown>).content] : a,
      )
    : [];
  return createHash('sha256')
    .update(canonical({ type: m.type ?? null, vocab: m.vocab ?? null, merges: m.merges ?? null, added, decoder: t.decoder ?? null }))
    .digest('hex');
}

/** JSON with object keys sorted at every depth (a vocabulary's key order says nothing about its ids). */
function canonical(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (typeof x === 'object' && x !== null) {
    const o = x as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(x);
}

/**
 * Refuses a teacher whose token ids would mean other text than the student's, naming both folders:
 * there is no cross-tokenizer alignment yet, and scoring another tokenizer's ids would be silently wrong.
 */
export function checkSameTokenizer(studentDir: string, teacherDir: string): void {
  if (tokenizerIdentity(studentDir) === tokenizerIdentity(teacherDir)) return;
  throw new ModelLoadError(
    `policyOptions.teacher: ${teacherDir} has another tokenizer than the policy's model ${studentDir} (their tokenizer.json vocabularies, merges, added tokens or decoders differ), so the same token ids would mean other text. The teacher scores the student's token ids as they are: there is no cross-tokenizer alignment yet. Fix: a teacher of the same family and tokenizer as the student (e.g. a larger Qwen3 for a Qwen3 student), or a student made with the teacher's tokenizer (agent-rl model new --tokenizer ${teacherDir})`,
  );
}

/** The student's Hugging Face folder: the warm start's base folder, else policyOptions.model. */
function studentDir(o: TransformerOptions): string {
  if (o.init !== '') {
    const stored = readCheckpoint(o.init).manifest.model;
    if ('dir' in stored && typeof stored.dir === 'string') return stored.dir;
  }
  return path.resolve(o.model);
}

/** The teacher of a run (policyOptions.teacher), loaded and checked against the student's tokenizer. */
export async function createTeacher(o: TransformerOptions, run: PolicyRunInfo): Promise<TeacherScorer> {
  const dir = path.resolve(o.teacher);
  if (!fs.existsSync(path.join(dir, 'config.json'))) {
    throw new ModelLoadError(
      `policyOptions.teacher: ${dir} holds no config.json. Fix: name a Hugging Face checkpoint folder (agent-rl model check DIR says what the workbench makes of one)`,
    );
  }
  const student = studentDir(o);
  checkSameTokenizer(student, dir);
  const backend = await initBackend(o.backend);
  // frozen and whole: no adapters, no warm start, the engine's own kernels (it never samples)
  const to: TransformerOptions = { ...o, model: dir, init: '', loraRank: 0, weightDtype: 'auto', rolloutEngine: 'engine', actionMode: 'generate' };
  const studentContext = modelSource(o, o.init !== '' ? readCheckpoint(o.init) : undefined).contextLength;
  const source = modelSource(to, undefined);
  if (source.arch.maxPositions < studentContext) {
    throw new ModelLoadError(
      `policyOptions.teacher: ${dir} reads at most ${source.arch.maxPositions} positions, fewer than the student's context of ${studentContext}, so it could not score a whole sequence. Fix: a smaller policyOptions.contextLength, or a teacher with a longer context`,
    );
  }
  const teacherSource = { ...source, contextLength: studentContext };
  const teacherRun = { ...run, sampleRows: 1, fullDistributions: false };
  const chosen = chooseComputePath(to, backend.name, source.arch);
  return chosen.kind === 'engine'
    ? loadTeacher(enginePath(to, teacherRun, backend, teacherSource, chosen.reason), teacherSource)
    : loadTeacher(tfjsPath(to, teacherRun, backend, teacherSource, chosen.reason), teacherSource);
}

async function loadTeacher<M extends PathModel<M>>(p: ComputePath<M>, { dir, arch }: ModelSource): Promise<TeacherScorer> {
  tokenizerOf(dir, arch.vocabSize); // its tokenizer fits its vocabulary, as a policy's must
  const model = await p.load();
  const scorer: Trainable = p.differentiable(model);
  return {
    describe: `${p.describe(model)} (${arch.modelType} ${model.parameterCount().toLocaleString('en')} parameters, frozen teacher ${dir})`,
    score: async (seqs: readonly TrainSequence[], temperature: number) =>
      // forward only: twice a training pass's positions, as the learner's reference pass
      (await shardLogprobs(scorer, seqs, { temperature, rows: false }, 2 * p.microBatchPositions)).logp,
    dispose: async () => {
      await model.dispose();
    },
  };
}
