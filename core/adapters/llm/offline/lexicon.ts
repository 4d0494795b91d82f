/**
 * The offline summarizer's lexicon: what a word, a decision and an open task look like, which
 * words say nothing, and how much each kind of fact weighs in the selection. Tuned on the
 * measurements in docs/summarizers.md.
 */
import { NOT_NAMES } from "../../../domain/salient-units.js";

/** Weight of each coverage key: each key counts once across the whole summary. */
export const WEIGHT = { day: 4, date: 3, number: 2.5, entity: 2, term: 0.5, focus: 3, mustKeep: 20 } as const;

const WORD_RE = /\b[a-z][a-z'’-]{4,}\b/g;

export const DECISION_RE =
  /\b(?:decided|decide to|agreed|agree to|we(?:'ll| will) go with|let's go with|let's use|going with|chose|chosen|settled on|approved|confirmed|final answer|the plan is)\b/i;
export const TASK_RE =
  /\b(?:todo|to-do|need to|needs to|have to|has to|must|remember to|remind|follow up|next step|deadline|due|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next week|the end of)|i(?:'ll| will)|we(?:'ll| will)|going to|plan(?:ning)? to|can you|could you|please)\b/i;

/** Openers that carry nothing ("Wow, ", "Haha! "), stripped from the start of a sentence. */
export const FILLER_OPENER_RE =
  /^(?:hey|hi|hello|wow|oh|ah|aw+|yeah|yes|yep|okay|ok|so|well|haha+|lol|omg|gosh|hmm+|um+|totally|absolutely|definitely|thanks|thank you)\b[\s,!.…-]*/i;

const STOP_TERMS = new Set(
  (
    "about above after again against being below between both could doing during every other their theirs " +
    "there these those through under until where which while would should really thing things think thinking " +
    "something anything everything nothing going always never little pretty maybe great thanks thank " +
    "sounds amazing awesome totally actually definitely people lately today whole still yeah right " +
    "wanted wants doesn't didn't haven't wasn't can't won't isn't aren't that's there's what's you're they're " +
    "we're i've you've it's let's glad happy cool super nice lovely feels feeling looks looking makes making " +
    "getting gotten loved loves kinda sorta stuff"
  ).split(" "),
);

/** The topic words of `text`: lower-cased words of five letters or more that are neither stop words nor names. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(WORD_RE)) {
    const w = m[0].replace(/[’']s$/, "");
    if (!STOP_TERMS.has(w) && !NOT_NAMES.has(w)) out.push(w);
  }
  return out;
}
