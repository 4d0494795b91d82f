/**
 * Renders the memory block an engine puts in its system prompt (spec §4): ordered sections, each
 * under a `##` heading. Every section here changes only when a compaction happens, so the whole
 * block belongs before the prompt-cache breakpoint and is byte-identical between such turns.
 */
import type { Process } from "./model.js";

export const SUMMARY_HEADING = "Earlier Conversation (compacted)";
export const PARENT_HEADING = "Parent Context";
export const PARENT_SUMMARY_HEADING = "Parent Conversation Summary";

export interface ContextSection {
  name: string;
  content: string;
  /** `static` sections change only on compaction: they go before the cache breakpoint. */
  cache: "static" | "dynamic";
}

/** What the parent section may show: identity always, the summary only within one project. */
export interface ParentContext {
  parent: Pick<Process, "name" | "recipe" | "engine" | "title">;
  summary: string | null;
}

/**
 * Spec §4.2 defensive rendering: a missing or blank field is `?`. Whitespace runs (newlines
 * included) collapse to one space, so a field can never start a heading of its own in the block.
 */
const field = (v: string | undefined) => {
  const text = v?.replace(/\s+/g, " ").trim();
  return text ? text : "?";
};

export function renderParent({ parent, summary }: ParentContext): string {
  const identity = [
    `Parent name: ${field(parent.name)}`,
    `Parent recipe: ${field(parent.recipe)}`,
    `Parent engine: ${field(parent.engine)}`,
    `Parent title: ${field(parent.title)}`,
  ].join("\n");
  return summary ? `${identity}\n\n### ${PARENT_SUMMARY_HEADING}\n${summary}` : identity;
}

export function buildSections(input: {
  summary: string | null;
  parent: ParentContext | null;
  extra?: ContextSection[];
}): ContextSection[] {
  const sections: ContextSection[] = [];
  if (input.summary) sections.push({ name: SUMMARY_HEADING, content: input.summary, cache: "static" });
  if (input.parent) sections.push({ name: PARENT_HEADING, content: renderParent(input.parent), cache: "static" });
  return [...sections, ...(input.extra ?? [])];
}

export const renderSection = (s: ContextSection) => `## ${s.name}\n${s.content}`;

/** The block, and the static prefix that ends at the cache breakpoint. */
export function renderBlock(sections: ContextSection[]): { block: string; staticBlock: string } {
  const staticPart = sections.filter((s) => s.cache === "static");
  const dynamicPart = sections.filter((s) => s.cache === "dynamic");
  const staticBlock = staticPart.map(renderSection).join("\n\n");
  const block = [...staticPart, ...dynamicPart].map(renderSection).join("\n\n");
  return { block, staticBlock };
}
