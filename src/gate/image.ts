import type { Sandbox, SandboxImage } from '../sandbox/sandbox.js';

/** A sandbox that notes the image its runs used, and optionally runs them all in one given image. */
export interface ImageRecordingSandbox {
  sandbox: Sandbox;
  /** The image of the first run that reported one (docker), or null (bwrap, none, no run yet). */
  image(): SandboxImage | null;
}

/**
 * Wraps a sandbox so a gate can record which image judged a change (by id, the exact content), and
 * so an audit can judge again in that same image: `image` (a name or an id) replaces the one each
 * run asks for.
 */
export function recordImage(inner: Sandbox, image?: string): ImageRecordingSandbox {
  let seen: SandboxImage | null = null;
  const sandbox: Sandbox = {
    kind: inner.kind,
    ...(inner.docker ? { docker: inner.docker } : {}),
    check: () => inner.check(),
    run: async (spec) => {
      const result = await inner.run(image === undefined ? spec : { ...spec, image });
      seen ??= result.image ?? null;
      return result;
    },
  };
  return { sandbox, image: () => seen };
}

/** The summary's sandbox part names the image by name and id: `docker genesis/node:20@sha256:…`. */
export function withImageInSummary(summary: string, kind: string, image: SandboxImage | null): string {
  if (!image || !summary.startsWith(`${kind}: `)) return summary;
  return `${kind} ${image.name}@${image.id}: ${summary.slice(kind.length + 2)}`;
}

const IMAGE_ID = /@(sha256:[0-9a-f]{64})/;

/** The image id a Genesis-Verified trailer (a gate summary) names, or null for gates without one. */
export function imageIdOfSummary(summary: string | null | undefined): string | null {
  return (summary && IMAGE_ID.exec(summary)?.[1]) || null;
}
