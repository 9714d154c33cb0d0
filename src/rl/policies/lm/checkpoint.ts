// Checkpoints of the transformer policy, a directory of two files:
//   checkpoint.json — { format: "agent-rl-checkpoint", version: 1, model: HfModelConfig, baseWeights?, tokenizer,
//                       policyVersion, optimizer: { step, options }, tensors: [{ name, shape,
//                       offset, length }], savedAt, note }
//   tensors.bin     — little-endian float32: every trainable weight (a LoRA run: its adapters only; the
//                       base stays in its folder) in `tensors` order, then AdamW's
//                       first moments ("adam.m/<name>") and second moments ("adam.v/<name>").
// Offsets and lengths count float32 elements. Loading checks every shape against the model. Under full
// fine-tuning the same folder is a Hugging Face checkpoint too (transformerPolicy.save). Checkpoints of
// the small character-level GPT of earlier versions (a model with no "kind") are refused with why.
import * as tf from '@tensorflow/tfjs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BaseWeights } from '../../../shared/baseWeights';
import { ConfigError } from '../../../shared/runConfig';
import type { AdamW, AdamWOptions } from '../../algo/adamw';
import type { HfModelConfig } from './models/hfModel';
import type { PolicyModel } from './models/policyModel';
import { tokenizerFromJSON, type Tokenizer } from './tokenizer';

export const CHECKPOINT_FORMAT = 'agent-rl-checkpoint';

interface TensorEntry {
  readonly name: string;
  readonly shape: number[];
  readonly offset: number;
  readonly length: number;
}

export interface CheckpointManifest {
  readonly format: typeof CHECKPOINT_FORMAT;
  readonly version: 1;
  /** The Hugging Face checkpoint folder the weights belong to (the trainable ones, adapters under LoRA, are the tensors here). */
  readonly model: HfModelConfig;
  /**
   * How the run held the weights it did not train (q8: 8-bit Q8_0 blocks, bf16, f32); absent in
   * checkpoints written before it was recorded. Informative only: the base is read from the folder.
   */
  readonly baseWeights?: BaseWeights;
  readonly tokenizer: { kind: string; [k: string]: unknown };
  readonly policyVersion: number;
  readonly optimizer: { readonly step: number; readonly options: AdamWOptions };
  readonly tensors: TensorEntry[];
  readonly savedAt: string;
  readonly note: string;
}

/**
 * Writes a checkpoint; `extra` tensors (e.g. a resume point's KL reference, "reference/<name>") are
 * stored after the optimizer's moments and ignored by `restoreCheckpoint`.
 */
export async function saveCheckpoint(
  dir: string,
  model: PolicyModel & { readonly config: HfModelConfig },
  tokenizer: Tokenizer,
  optimizer: AdamW,
  policyVersion: number,
  note = '',
  extra: readonly (readonly [string, tf.Tensor])[] = [],
): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  const entries: TensorEntry[] = [];
  const chunks: Float32Array[] = [];
  let offset = 0;
  const add = async (name: string, t: tf.Tensor): Promise<void> => {
    const data = (await t.data()) as Float32Array;
    entries.push({ name, shape: t.shape, offset, length: data.length });
    chunks.push(data);
    offset += data.length;
  };
  for (const [i, name] of model.names.entries()) await add(name, model.weights[i]!);
  for (const [i, name] of model.names.entries()) await add(`adam.m/${name}`, optimizer.m[i]!);
  for (const [i, name] of model.names.entries()) await add(`adam.v/${name}`, optimizer.v[i]!);
  for (const [name, t] of extra) await add(name, t);
  // tensor by tensor: a full fine-tuning checkpoint of a pretrained model is larger than one buffer may be
  const fd = fs.openSync(path.join(dir, 'tensors.bin'), 'w');
  try {
    for (const c of chunks) {
      const bytes = new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
      // one call moves at most about 2 GiB on Linux: loop until the tensor is written
      for (let done = 0; done < bytes.length;) done += fs.writeSync(fd, bytes, done, bytes.length - done);
    }
  } finally {
    fs.closeSync(fd);
  }
  const manifest: CheckpointManifest = {
    format: CHECKPOINT_FORMAT,
    version: 1,
    model: model.config,
    ...(model.baseWeights ? { baseWeights: model.baseWeights } : {}),
    tokenizer: tokenizer.toJSON(),
    policyVersion,
    optimizer: { step: optimizer.step, options: optimizer.options },
    tensors: entries,
    savedAt: new Date().toISOString(),
    note,
  };
  const file = path.join(dir, 'checkpoint.json');
  fs.writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return file;
}

export interface LoadedCheckpoint {
  readonly manifest: CheckpointManifest;
  readonly tokenizer: Tokenizer;
  /** name → float32 data */
  readonly tensors: Map<string, Float32Array>;
}

export function readCheckpoint(fileOrDir: string): LoadedCheckpoint {
  const file = fs.existsSync(fileOrDir) && fs.statSync(fileOrDir).isDirectory() ? path.join(fileOrDir, 'checkpoint.json') : fileOrDir;
  let manifest: CheckpointManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as CheckpointManifest;
  } catch (e) {
    throw new ConfigError([
      {
        field: 'policyOptions.init',
        value: fileOrDir,
        message: `cannot read a checkpoint there (${(e as Error).message})`,
        fix: 'point it at a checkpoint directory written by agent-rl (it holds checkpoint.json and tensors.bin)',
      },
    ]);
  }
  if (manifest.format !== CHECKPOINT_FORMAT || manifest.version !== 1) {
    throw new Error(`${file} is not an agent-rl checkpoint of version 1 (format ${String(manifest.format)}, version ${String(manifest.version)})`);
  }
  // tensor by tensor (Node reads no file over 2 GiB whole)
  const binFile = path.join(path.dirname(file), 'tensors.bin');
  const size = fs.statSync(binFile).size;
  const tensors = new Map<string, Float32Array>();
  const fd = fs.openSync(binFile, 'r');
  try {
    for (const e of manifest.tensors) {
      if (4 * (e.offset + e.length) > size) throw new Error(`${file}: tensor ${e.name} lies beyond the end of tensors.bin (truncated file?)`);
      const data = new Float32Array(e.length);
      const bytes = new Uint8Array(data.buffer);
      for (let done = 0; done < bytes.length;) {
        const n = fs.readSync(fd, bytes, done, bytes.length - done, 4 * e.offset + done);
        if (n === 0) throw new Error(`${file}: tensor ${e.name} ends early in tensors.bin (truncated file?)`);
        done += n;
      }
      tensors.set(e.name, data);
    }
  } finally {
    fs.closeSync(fd);
  }
  return { manifest, tokenizer: tokenizerFromJSON(manifest.tokenizer), tensors };
}

/**
 * Copies the checkpoint's weights (and, given an optimizer, its moments and step) into the model;
 * `prefix` reads another set of weights of the same model (a resume point's "reference/").
 */
export function restoreCheckpoint(ck: LoadedCheckpoint, model: PolicyModel, optimizer?: AdamW, prefix = ''): void {
  tf.tidy(() => restore(ck, model, optimizer, prefix));
  model.weightsChanged?.();
}

function restore(ck: LoadedCheckpoint, model: PolicyModel, optimizer: AdamW | undefined, prefix: string): void {
  const get = (name: string, shape: readonly number[]): Float32Array => {
    const data = ck.tensors.get(name);
    const entry = ck.manifest.tensors.find((e) => e.name === name);
    if (!data || !entry) throw new Error(`checkpoint lacks tensor ${name}`);
    if (entry.shape.join('x') !== shape.join('x'))
      throw new Error(`checkpoint tensor ${name} has shape ${entry.shape.join('x')}, the model needs ${shape.join('x')}`);
    return data;
  };
  model.names.forEach((name, i) => {
    const w = model.weights[i]!;
    w.assign(tf.tensor(get(`${prefix}${name}`, w.shape), w.shape));
  });
  if (optimizer) {
    model.names.forEach((name, i) => {
      optimizer.m[i]!.assign(tf.tensor(get(`adam.m/${name}`, optimizer.m[i]!.shape), optimizer.m[i]!.shape));
      optimizer.v[i]!.assign(tf.tensor(get(`adam.v/${name}`, optimizer.v[i]!.shape), optimizer.v[i]!.shape));
    });
    optimizer.step = ck.manifest.optimizer.step;
  }
}

type StoredModel = PolicyModel & { readonly config: HfModelConfig };

/**
 * Whether a resume point holds this model. Under LoRA the base weights stay in the folder, so it must be
 * the same folder; under full fine-tuning the state holds every weight, so the folder it was made from
 * only brings the architecture and the tokenizer, and another folder with both the same will do (a
 * fresh model written again where another process's cache is).
 */
function sameModel(ck: LoadedCheckpoint, config: HfModelConfig, tokenizer: Tokenizer): boolean {
  const stored = ck.manifest.model;
  if (config.lora || stored.lora) return JSON.stringify(stored) === JSON.stringify(config);
  return (
    JSON.stringify({ ...stored, dir: '' }) === JSON.stringify({ ...config, dir: '' }) &&
    JSON.stringify(ck.manifest.tokenizer) === JSON.stringify(tokenizer.toJSON())
  );
}

/** The message for a checkpoint of the small GPT that earlier versions trained (its model has no kind). */
export function smallGptGone(where: string): string {
  return `${where} holds the small character-level GPT of earlier versions; that network is gone (small models are Hugging Face checkpoints on the engine now), so its weights cannot be loaded. Its runs stay readable in every view. Fix: start a new run (agent-rl sft writes a warm start)`;
}

/** A policy's state (the part of a run's resume point that is the policy's): the weights, the optimizer's moments and step, and the KL reference ("reference/<name>"). */
export function savePolicyState(
  dir: string,
  model: StoredModel,
  reference: PolicyModel,
  tokenizer: Tokenizer,
  optimizer: AdamW,
  policyVersion: number,
): Promise<string> {
  const extra = reference.names.map((name, i) => [`reference/${name}`, reference.weights[i]!] as const);
  return saveCheckpoint(dir, model, tokenizer, optimizer, policyVersion, 'resume point', extra);
}

/** Restores a policy state into the model, its optimizer and its reference, after checking it holds this model; returns its policy version. */
export function loadPolicyState(dir: string, model: StoredModel, reference: PolicyModel, optimizer: AdamW, tokenizer: Tokenizer): number {
  const ck = readCheckpoint(dir);
  if (!('kind' in ck.manifest.model)) throw new Error(smallGptGone(`the resume point in ${dir}`));
  if (!sameModel(ck, model.config, tokenizer)) {
    throw new Error(
      `the resume point in ${dir} holds a model of another shape or folder (${JSON.stringify(ck.manifest.model)}); this run's is ${JSON.stringify(model.config)}`,
    );
  }
  restoreCheckpoint(ck, model, optimizer);
  restoreCheckpoint(ck, reference, undefined, 'reference/');
  return ck.manifest.policyVersion;
}
