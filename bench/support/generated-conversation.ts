/**
 * Built-in long conversations in the LoCoMo file shape (bench/support/locomo.ts), written by code:
 * two friends catch up over a few dozen sessions weeks apart, mixing news full of names, places,
 * numbers and dates with small talk, and every piece of news becomes a question whose answer is
 * in that turn. Deterministic (seeded), so the tests that use them assert fixed outcomes; the
 * benchmarks and the demo use them when the LoCoMo data is not present (`conversationsOrBuiltIn`).
 */
import { mulberry32 } from "../../tools/chaos/rng.js";
import { loadConversations, locomoDir, parseConversation, type LocomoConversation } from "./locomo.js";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

const PEOPLE = [
  "Amara", "Bjorn", "Carmen", "Dev", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Keiko", "Lars", "Maya", "Nikolai",
  "Olu", "Paloma", "Quentin", "Rosa", "Sanjay", "Tove", "Umar", "Vera", "Wendell", "Ximena", "Yusuf", "Zofia",
];
const PLACES = [
  "Lisbon", "Kyoto", "Vancouver", "Marrakesh", "Tallinn", "Cape Town", "Oaxaca", "Reykjavik", "Hanoi", "Edinburgh", "Porto",
  "Santiago", "Bergen", "Tbilisi", "Cusco", "Ljubljana", "Hobart", "Zanzibar", "Quebec City", "Valencia",
];
const ORGS = ["Northwind Clinic", "Brightside Academy", "Harbor Bakery", "Maple Robotics", "Riverside Library", "Summit Outfitters", "Copperleaf Studio", "Greenway Transit"];
const JOBS = ["nurse", "teacher", "baker", "engineer", "librarian", "designer", "pilot", "chemist"];
const PETS = ["Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Clementine", "Ziggy", "Nutmeg"];
const BOOKS = ["The Quiet Orchard", "Salt and Iron", "Letters from Nowhere", "The Glass Meridian", "A Map of Small Hours", "Winter Harbor"];
const INSTRUMENTS = ["cello", "ukulele", "piano", "banjo", "violin", "drums"];
const EVENTS = ["Harvest Half Marathon", "Riverfront Jazz Festival", "Spring Pottery Fair", "Lantern Night Market", "Coastal Cycling Tour"];
const DISHES = ["lemon risotto", "mushroom dumplings", "plum galette", "lentil curry", "smoked trout salad"];

const REACTIONS = [
  "That's amazing! I'm so happy for you.",
  "Wow, that sounds like so much fun.",
  "Haha, I love that so much.",
  "Oh no, I'm sorry to hear that. How are you holding up?",
  "That's really cool, tell me more!",
  "Aw, that's so sweet of you.",
  "Thanks, that means a lot to me.",
  "Totally agree, it was a great call.",
  "Sounds good to me!",
  "Ha, I can picture it already.",
];
const QUESTIONS = [
  "What have you been up to lately?",
  "How did that go in the end?",
  "Anything exciting coming up for you?",
  "How is everyone at home doing?",
  "Have you had any time to relax this week?",
];

interface Slots {
  rand: () => number;
  pick<T>(items: readonly T[]): T;
  int(min: number, max: number): number;
}

/** One piece of news: its text and the questions it answers (answer verbatim in the text). */
type News = (s: Slots) => { text: string; qa: Array<{ question: string; answer: string; category: number }> };

const NEWS: News[] = [
  (s) => {
    const [place, who, days, day] = [s.pick(PLACES), s.pick(PEOPLE), s.int(2, 12), s.pick(WEEKDAYS)];
    return {
      text: `I finally went to ${place} with my cousin ${who} last ${day}, and we stayed for ${days} days. The food alone was worth the trip.`,
      qa: [
        { question: `Where did the speaker travel with ${who}?`, answer: place, category: 1 },
        { question: `How many days was the trip to ${place}?`, answer: `${days} days`, category: 1 },
      ],
    };
  },
  (s) => {
    const [who, org, job] = [s.pick(PEOPLE), s.pick(ORGS), s.pick(JOBS)];
    return {
      text: `My sister ${who} just started at ${org} as a ${job}, she is nervous but really excited about it.`,
      qa: [{ question: `Where does ${who} work now?`, answer: org, category: 1 }],
    };
  },
  (s) => {
    const [pet, month, kilos] = [s.pick(PETS), s.pick(MONTHS), s.int(3, 30)];
    return {
      text: `We adopted a puppy called ${pet} back in ${month}; she already weighs ${kilos} kilos and chews every shoe in the house.`,
      qa: [
        { question: "What is the name of the puppy they adopted?", answer: pet, category: 1 },
        { question: `When did they adopt ${pet}?`, answer: month, category: 2 },
      ],
    };
  },
  (s) => {
    const [event, place, month, day, fee] = [s.pick(EVENTS), s.pick(PLACES), s.pick(MONTHS), s.int(1, 28), s.int(15, 240)];
    return {
      text: `I signed up for the ${event} in ${place} on ${month} ${day}. The entry fee was ${fee} dollars, so I'd better show up!`,
      qa: [
        { question: `When is the ${event}?`, answer: `${month} ${day}`, category: 2 },
        { question: `How much was the entry fee for the ${event}?`, answer: `${fee} dollars`, category: 1 },
      ],
    };
  },
  (s) => {
    const [who, book, pages] = [s.pick(PEOPLE), s.pick(BOOKS), s.int(40, 400)];
    return {
      text: `${who} lent me a novel called ${book}. I'm ${pages} pages in and I can't put it down.`,
      qa: [{ question: `Which book did ${who} lend the speaker?`, answer: book, category: 1 }],
    };
  },
  (s) => {
    const [instrument, months, who] = [s.pick(INSTRUMENTS), s.int(2, 30), s.pick(PEOPLE)];
    return {
      text: `I've been practising the ${instrument} for ${months} months now, and my teacher ${who} says I might play at the recital.`,
      qa: [{ question: `Who teaches the speaker the ${instrument}?`, answer: who, category: 1 }],
    };
  },
  (s) => {
    const [dish, who, guests, day] = [s.pick(DISHES), s.pick(PEOPLE), s.int(4, 16), s.pick(WEEKDAYS)];
    return {
      text: `On ${day} I cooked ${dish} for ${guests} people at ${who}'s birthday dinner. Nobody left a crumb.`,
      qa: [{ question: `What did the speaker cook for ${who}'s birthday?`, answer: dish, category: 1 }],
    };
  },
  (s) => {
    const [place, year, who] = [s.pick(PLACES), s.int(2009, 2022), s.pick(PEOPLE)];
    return {
      text: `Funny story: I ran into ${who} yesterday, we first met in ${place} back in ${year}, can you believe it?`,
      qa: [{ question: `When did the speaker first meet ${who}?`, answer: String(year), category: 2 }],
    };
  },
];

/** "1:56 pm on 8 May, 2023", LoCoMo's session time format. */
function sessionTime(d: Date): string {
  const h = d.getUTCHours();
  const minutes = String(d.getUTCMinutes()).padStart(2, "0");
  return `${h % 12 || 12}:${minutes} ${h < 12 ? "am" : "pm"} on ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}, ${d.getUTCFullYear()}`;
}

export interface GeneratedSampleOptions {
  seed: number;
  sampleId: string;
  speakers: [string, string];
  /** The first session's start. */
  start: Date;
  sessions: number;
  turnsPerSession: [number, number];
}

/** One sample as locomo10.json holds it: `{ sample_id, conversation, qa }`. */
export function generateLocomoSample(o: GeneratedSampleOptions): { sample_id: string; conversation: Record<string, unknown>; qa: unknown[] } {
  const rand = mulberry32(o.seed);
  const s: Slots = {
    rand,
    pick: (items) => items[Math.floor(rand() * items.length)]!,
    int: (min, max) => min + Math.floor(rand() * (max - min + 1)),
  };
  const [a, b] = o.speakers;
  const conversation: Record<string, unknown> = { speaker_a: a, speaker_b: b };
  const qa: unknown[] = [];
  let at = o.start.getTime();
  for (let n = 1; n <= o.sessions; n++) {
    conversation[`session_${n}_date_time`] = sessionTime(new Date(at));
    const turns: Array<{ speaker: string; dia_id: string; text: string }> = [];
    const count = s.int(o.turnsPerSession[0], o.turnsPerSession[1]);
    for (let i = 1; i <= count; i++) {
      const speaker = i % 2 === 1 ? a : b;
      const other = speaker === a ? b : a;
      const diaId = `D${n}:${i}`;
      let text: string;
      if (i === 1) text = `Hey ${other}! Good to hear from you. ${s.pick(QUESTIONS)}`;
      else {
        const r = rand();
        if (r < 0.5) {
          const news = s.pick(NEWS)(s);
          text = news.text;
          for (const q of news.qa) qa.push({ ...q, evidence: [diaId] });
        } else if (r < 0.85) text = s.pick(REACTIONS);
        else text = s.pick(QUESTIONS);
      }
      turns.push({ speaker, dia_id: diaId, text });
    }
    conversation[`session_${n}`] = turns;
    // The next session: 3 to 20 days later, at another time of day.
    at += s.int(3, 20) * 86_400_000 + s.int(-300, 300) * 60_000;
  }
  return { sample_id: o.sampleId, conversation, qa };
}

/** The built-in conversations: three long ones (about 400 turns each), the first from 8 May 2023. */
export const GENERATED_SAMPLES: GeneratedSampleOptions[] = [
  { seed: 26, sampleId: "gen-1", speakers: ["Noor", "Emil"], start: new Date(Date.UTC(2023, 4, 8, 13, 56)), sessions: 19, turnsPerSession: [16, 28] },
  { seed: 30, sampleId: "gen-2", speakers: ["Talia", "Marcus"], start: new Date(Date.UTC(2023, 0, 20, 16, 4)), sessions: 19, turnsPerSession: [16, 28] },
  { seed: 41, sampleId: "gen-3", speakers: ["Priya", "Oskar"], start: new Date(Date.UTC(2022, 8, 2, 10, 30)), sessions: 22, turnsPerSession: [14, 26] },
];

export function generatedConversations(): LocomoConversation[] {
  return GENERATED_SAMPLES.map((o) => {
    const sample = generateLocomoSample(o);
    return parseConversation(sample.sample_id, { ...sample.conversation, qa: sample.qa });
  });
}

export interface ConversationSource {
  conversations: LocomoConversation[];
  /** True for the real LoCoMo data, false for the built-in generated conversations. */
  locomo: boolean;
  /** One line saying where the conversations came from (and how to get LoCoMo when absent). */
  source: string;
}

/** LoCoMo when it is there; otherwise the built-in conversations, and a line that says so. */
export function conversationsOrBuiltIn(): ConversationSource {
  const dir = locomoDir();
  const conversations = loadConversations(dir);
  if (conversations.length > 0) return { conversations, locomo: true, source: `LoCoMo, ${conversations.length} conversations from ${dir}` };
  const generated = generatedConversations();
  return {
    conversations: generated,
    locomo: false,
    source: `no LoCoMo data under ${dir} (run \`npm run data:locomo\` or set LOCOMO_DIR): using the ${generated.length} built-in generated conversations instead`,
  };
}
