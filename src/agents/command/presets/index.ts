import { aiderPreset } from './aider.js';
import { claudeCodePreset } from './claude-code.js';
import { codexPreset } from './codex.js';
import { copilotPreset } from './copilot.js';
import { geminiPreset } from './gemini.js';
import { opencodePreset } from './opencode.js';
import { qwenCodePreset } from './qwen-code.js';
import type { PresetName } from '../../../manifest/preset-names.js';
import type { CommandPreset } from './preset.js';

export type { PresetName } from '../../../manifest/preset-names.js';
export type { CommandPreset } from './preset.js';

/** Every preset of the `command` adapter, by its `agent.preset` name. */
export const PRESETS: Readonly<Record<PresetName, CommandPreset>> = {
  'claude-code': claudeCodePreset,
  codex: codexPreset,
  aider: aiderPreset,
  opencode: opencodePreset,
  gemini: geminiPreset,
  copilot: copilotPreset,
  'qwen-code': qwenCodePreset,
};
