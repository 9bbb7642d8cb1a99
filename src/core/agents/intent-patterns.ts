/**
 * Pattern-based intent detection: the deterministic first line of the agents.
 *
 * Rules that keep false positives out ("how do I create a note in Obsidian?" must stay a chat question):
 * - A pattern must match the WHOLE message, from its start: a request is an imperative ("create a note
 *   on X"), optionally after politeness ("please", "can you", "hey Krypton,"). A question that merely
 *   contains the words ("how do I…", "what's the best way to write a note about…") never starts that way.
 * - Create needs "note(s) on/about/regarding/covering <topic>": "write a note template" has no topic.
 * - Current-note summaries must be the whole request ("summarize this note", optionally "please"/"for me");
 *   "summarize this note in French" carries instructions the agent would drop, so normal chat gets it.
 * - Arguments longer than MAX_ARGUMENT_CHARS are not a topic but a paragraph: normal chat handles those.
 * - A topic that only points at the conversation ("make a note about this", "…on our discussion") has no
 *   subject the patterns can see: normal chat (or the LLM classifier, which reads the history) decides.
 */

export type IntentKind = "create-note" | "search-notes" | "summarize-note" | "summarize-topic";

export interface DetectedIntent {
  intent: IntentKind;
  /** The topic or query; "" for summarize-note (the active note). */
  argument: string;
  /** Which detector decided. */
  source: "patterns" | "classifier";
}

export const MAX_ARGUMENT_CHARS = 200;
const MAX_MESSAGE_CHARS = 1000;

/**
 * Politeness that may precede a request, any number of times ("hey krypton, can you please …"), in the
 * supported languages ("por favor", "s'il te plaît", "bitte", "per favore", "пожалуйста", "você pode", …).
 */
const LEAD =
  String.raw`^(?:(?:hey|hi|hello|ok|okay|hola|salut|bonjour|hallo|ciao|ol[áa]|привет)\s+krypton[,:!]?\s+|krypton[,:]\s*|(?:please|pls|kindly|now|ok|okay|por\s+favor|s'il\s+(?:te|vous)\s+pla[îi]t|bitte|per\s+favore|пожалуйста)[,]?\s+|(?:can|could|would|will)\s+you\s+|i(?:'d| would)\s+like\s+you\s+to\s+|i\s+want\s+you\s+to\s+|help\s+me\s+|(?:puedes|podr[íi]as|peux-tu|pourrais-tu|pouvez-vous|pourriez-vous|kannst\s+du|k[öo]nntest\s+du|können\s+sie|puoi|potresti|(?:voc[êe]\s+)?(?:pode|poderia)|можешь|можете|мне\s+нужно)\s+)*`;
/** Optional quantity/adjective words before "note" ("a short new note"). */
const NOTE_ADJ = String.raw`(?:(?:a|an|one|some)\s+)?(?:(?:new|short|quick|brief|small|little|simple|detailed|concise)\s+)*`;
const ABOUT = String.raw`(?:on|about|regarding|covering|on\s+the\s+topic\s+of|about\s+the\s+topic\s+of)`;
const THIS_NOTE = String.raw`(?:this|the\s+current|the\s+open|the\s+active|my\s+current|the\s+opened|current)\s+(?:note|page|document|file)`;
const SUMMARIZE = String.raw`(?:summari[sz]e|sum\s+up|recap)`;
const A_SUMMARY = String.raw`(?:give|write|make|get|show|create)\s+(?:me\s+)?(?:a\s+)?(?:(?:short|brief|quick|concise)\s+)?(?:summary|overview|recap)\s+of`;
const MY_NOTES = String.raw`(?:(?:all\s+)?(?:of\s+)?(?:my|the)\s+notes|notes)`;
/**
 * Italian and Russian ask with a modal and an infinitive ("puoi creare …", "можешь создать …"). The infinitive
 * alone is not taken: "Creare una nota sulle maree è utile?" is a question.
 */
const IT_CAN = String.raw`(?:puoi|potresti|potete|potreste)`;
const RU_CAN = String.raw`(?:можешь|можете|мне\s+нужно)`;
/** German puts "mir" and "bitte" after the verb ("Erstelle mir bitte eine Notiz …"). */
const DE_ASIDE = String.raw`(?:(?:mir|bitte)\s+)*`;
/** "über Gezeiten", "zum Thema Gezeiten": the topic after it. */
const DE_ABOUT = String.raw`(?:[üu]ber|zu|zum|zur)\s+(?:(?:dem|das)\s+)?(?:thema\s+)?`;

const POINTS_AT_CONVERSATION =
  /^(?:(?:all\s+)?(?:this|that|it|these|those|them|above|the\s+above|what\s+(?:we|you|i)\s+(?:just\s+)?(?:discussed|said|talked\s+about))|(?:this|that|our|the|my)\s+(?:conversation|discussion|chat|answer|reply|response|thread|last\s+(?:answer|message|reply)))$/i;
/** The same in the other supported languages ("sobre esto", "sur ça", "über das", "su questo", "об этом"). */
const POINTS_AT_CONVERSATION_OTHER =
  /^(?:esto|eso|ello|lo\s+anterior|ceci|cela|ça|ca|das|dies|diese[sn]?|isso|isto|questo|quello|ci[òo]|это|этом|том|(?:nuestra|esta|la)\s+conversaci[óo]n|(?:notre|cette)\s+conversation|unser(?:e|em)?\s+(?:gespr[äa]ch|unterhaltung)|(?:nossa|esta)\s+conversa|(?:nostra|questa)\s+conversazione|нашем?\s+разговор[ае]?)$/iu;

/** The same in Japanese, Chinese and Korean ("これについて", "关于这个的", "그것에 대한"). */
const POINTS_AT_CONVERSATION_CJK =
  /^(?:これ|それ|あれ|この会話|今の会話|上記|さっきの(?:話|会話|回答)|这|這|这个|這個|那|那个|那個|此|上面|以上|上述|我们的对话|我們的對話|这次对话|這次對話|对话|對話|이것|그것|이거|그거|이|그|위|위의\s*내용|우리\s*대화|이\s*대화|방금\s*(?:한\s*)?(?:이야기|대화))$/u;

/**
 * The same four requests in Spanish, French, German, Portuguese, Italian and Russian. Same rules as the
 * English ones: an imperative from the start of the message, "note(s) about <topic>" for create and
 * search, the whole message for current-note summaries; questions ("¿cómo creo una nota…?") stay chat.
 * Accented letters also match without their accent, as people often type them.
 */
const OTHER_LANGUAGES: { intent: IntentKind; patterns: RegExp[] }[] = [
  {
    intent: "create-note",
    patterns: [
      // es: crea una nota sobre las mareas / escribe una nota corta acerca de …
      re(String.raw`(?:crea|cr[ée]ame|crear|haz(?:me)?|hacer|escribe|escr[íi]beme|escribir|redacta|redactar|genera|generar)\s+(?:una\s+)?(?:(?:nueva|breve|corta|peque[ñn]a)\s+)?notas?\s+(?:(?:nuevas?|breves?|cortas?)\s+)?(?:sobre|acerca\s+de|de\s+la|del|de)\s+(.+)`),
      // fr: crée une note sur les marées / écris-moi une note à propos de …
      re(String.raw`(?:cr[ée]e|cr[ée]er|fais|[ée]cris|r[ée]dige|g[ée]n[èe]re)(?:-moi)?\s+(?:une\s+)?(?:(?:nouvelle|courte|petite|br[èe]ve)\s+)?notes?\s+(?:sur|[àa]\s+propos\s+d[eu']\s*|concernant)\s*(.+)`),
      // de: erstelle eine Notiz über Gezeiten / schreib mir eine kurze Notiz zu …
      re(String.raw`(?:erstelle|erstell|schreibe|schreib|mache|mach|lege|leg|verfasse)\s+${DE_ASIDE}(?:eine\s+)?(?:(?:neue|kurze|kleine)\s+)?notiz\s+${DE_ABOUT}(.+?)(?:\s+an)?`),
      // de, the verb last after "kannst du" (LEAD): … eine Notiz über Gezeiten erstellen?
      re(String.raw`${DE_ASIDE}(?:eine\s+)?(?:(?:neue|kurze|kleine)\s+)?notiz\s+${DE_ABOUT}(.+?)\s+(?:erstellen|schreiben|anlegen|machen|verfassen)`),
      // pt: crie uma nota sobre as marés
      re(String.raw`(?:crie|cria|criar|escreva|escreve|fa[çc]a|faz)\s+(?:uma\s+)?(?:(?:nova|breve|pequena|curta)\s+)?notas?\s+(?:sobre|acerca\s+de)\s+(.+)`),
      // it: crea una nota sulle maree / scrivi una nota su …
      re(String.raw`(?:crea|creami|scrivi|scrivimi|fai|genera|${IT_CAN}\s+(?:creare|scrivere|fare|generare))\s+(?:una\s+)?(?:(?:nuova|breve|piccola)\s+)?not[ae]\s+(?:(?:nuova|breve)\s+)?(?:su|sul|sullo|sulla|sui|sugli|sulle|riguardo\s+a|a\s+proposito\s+di)\s+(.+)`),
      // ru: создай заметку о приливах
      re(String.raw`(?:создай|создайте|напиши|напишите|сделай|составь|${RU_CAN}\s+(?:создать|написать|сделать|составить))\s+(?:(?:новую|короткую|небольшую)\s+)?заметку\s+(?:о|об|обо|про|на\s+тему)\s+(.+)`),
    ],
  },
  {
    intent: "summarize-note",
    patterns: [
      re(String.raw`(?:resume|res[úu]meme|resumir|haz\s+un\s+resumen\s+de)\s+(?:esta|la)\s+nota(?:\s+actual)?`),
      re(String.raw`(?:r[ée]sume|r[ée]sumer|fais\s+un\s+r[ée]sum[ée]\s+de)(?:-moi)?\s+(?:cette|la)\s+note(?:\s+actuelle)?`),
      re(String.raw`(?:fasse|fass)\s+${DE_ASIDE}(?:diese|die\s+aktuelle|die\s+offene)\s+notiz\s+zusammen`),
      re(String.raw`${DE_ASIDE}(?:diese|die\s+aktuelle|die\s+offene)\s+notiz\s+zusammenfassen`),
      re(String.raw`(?:resuma|resume|resumir|fa[çc]a\s+um\s+resumo\s+d[ae])\s+(?:esta|essa|a)\s+nota(?:\s+atual)?`),
      re(String.raw`(?:riassumi|riassumere|fai\s+un\s+riassunto\s+di)\s+(?:questa|la)\s+nota(?:\s+(?:corrente|attuale|aperta))?`),
      re(String.raw`(?:(?:кратко\s+)?перескажи|резюмируй|кратко\s+изложи|сделай\s+краткое\s+содержание)\s+(?:эту|этой|текущую|текущей|открытую)\s+заметк[уи]`),
    ],
  },
  {
    intent: "summarize-topic",
    patterns: [
      re(String.raw`(?:resume|resumir)\s+(?:todas\s+)?(?:mis|las)\s+notas\s+(?:sobre|acerca\s+de|de)\s+(.+)`),
      re(String.raw`qu[ée]\s+dicen\s+mis\s+notas\s+(?:sobre|acerca\s+de|de)\s+(.+)`),
      re(String.raw`(?:r[ée]sume|r[ée]sumer)(?:-moi)?\s+(?:toutes\s+)?mes\s+notes\s+(?:sur|[àa]\s+propos\s+de|concernant)\s+(.+)`),
      re(String.raw`que\s+disent\s+mes\s+notes\s+(?:sur|[àa]\s+propos\s+de)\s+(.+)`),
      re(String.raw`(?:fasse|fass)\s+(?:alle\s+)?(?:meine\s+)?notizen\s+(?:[üu]ber|zu|zum|zur)\s+(.+?)\s+zusammen`),
      re(String.raw`was\s+sagen\s+meine\s+notizen\s+(?:[üu]ber|zu|zum|zur)\s+(.+)`),
      re(String.raw`(?:resuma|resume|resumir)\s+(?:as\s+)?(?:minhas|as)\s+notas\s+(?:sobre|acerca\s+de)\s+(.+)`),
      re(String.raw`o\s+que\s+(?:dizem|falam)\s+(?:as\s+)?minhas\s+notas\s+(?:sobre|de)\s+(.+)`),
      re(String.raw`(?:riassumi|riassumere)\s+(?:tutte\s+)?(?:le\s+)?mie\s+note\s+(?:su|sul|sullo|sulla|sui|sugli|sulle|riguardo\s+a)\s+(.+)`),
      re(String.raw`cosa\s+dicono\s+le\s+mie\s+note\s+(?:su|sul|sullo|sulla|sui|sugli|sulle)\s+(.+)`),
      re(String.raw`(?:резюмируй|перескажи|обобщи)\s+(?:все\s+)?(?:мои\s+)?заметки\s+(?:о|об|обо|про|на\s+тему)\s+(.+)`),
      re(String.raw`что\s+(?:говорят|написано\s+в)\s+моих?\s+заметк(?:и|ах)\s+(?:о|об|обо|про)\s+(.+)`),
    ],
  },
  {
    intent: "search-notes",
    patterns: [
      re(String.raw`(?:busca|buscar|b[úu]scame|encuentra|encu[ée]ntrame|muestra|mu[ée]strame|lista)\s+(?:todas\s+)?(?:(?:mis|las)\s+)?notas\s+(?:sobre|acerca\s+de|de|que\s+mencionan|que\s+hablan\s+de|con)\s+(.+)`),
      re(String.raw`busca\s+en\s+(?:mis\s+|las\s+)?notas\s+(?:sobre\s+|por\s+)?(.+)`),
      re(String.raw`qu[ée]\s+notas\s+(?:hablan\s+de|mencionan|tratan\s+(?:de|sobre))\s+(.+)`),
      re(String.raw`(?:cherche|chercher|trouve|trouver|montre|liste)(?:-moi)?\s+(?:toutes\s+)?(?:(?:les|mes|des)\s+)?notes\s+(?:sur|[àa]\s+propos\s+de|concernant|qui\s+parlent\s+de|mentionnant|avec)\s+(.+)`),
      re(String.raw`cherche\s+dans\s+(?:mes|les)\s+notes\s+(?:pour\s+)?(.+)`),
      re(String.raw`quelles\s+notes\s+(?:parlent\s+de|mentionnent|traitent\s+de)\s+(.+)`),
      re(String.raw`(?:finde|find|suche|such|zeige|zeig)\s+${DE_ASIDE}(?:alle\s+)?(?:meine\s+)?notizen\s+(?:${DE_ABOUT}|mit\s+)(.+)`),
      re(String.raw`${DE_ASIDE}(?:alle\s+)?(?:meine\s+)?notizen\s+(?:${DE_ABOUT}|mit\s+)(.+?)\s+(?:finden|suchen|zeigen)`),
      re(String.raw`durchsuche\s+(?:meine\s+|die\s+)?notizen\s+nach\s+(.+)`),
      re(String.raw`welche\s+notizen\s+(?:handeln\s+von|erw[äa]hnen|behandeln)\s+(.+)`),
      re(String.raw`(?:procure|procura|busque|busca|encontre|encontra|mostre|mostra)(?:-me)?\s+(?:todas\s+)?(?:(?:as\s+)?minhas\s+|as\s+)?notas\s+(?:sobre|de|que\s+falam\s+de|com)\s+(.+)`),
      re(String.raw`quais\s+notas\s+(?:falam\s+(?:de|sobre)|mencionam)\s+(.+)`),
      re(String.raw`(?:cerca|trova|mostra|mostrami|elenca|${IT_CAN}\s+(?:cercare|trovare|mostrarmi|mostrare))\s+(?:tutte\s+)?(?:(?:le\s+)?mie\s+|le\s+)?note\s+(?:su|sul|sullo|sulla|sui|sugli|sulle|riguardo\s+a|che\s+parlano\s+di|con)\s+(.+)`),
      re(String.raw`quali\s+note\s+(?:parlano\s+di|menzionano)\s+(.+)`),
      re(String.raw`(?:найди|найти|покажи|поищи|ищи)\s+(?:все\s+)?(?:мои\s+)?заметки\s+(?:о|об|обо|про|по|на\s+тему|с)\s+(.+)`),
      re(String.raw`(?:поищи|поиск)\s+в\s+(?:моих\s+)?заметках\s+(?:про\s+|о\s+)?(.+)`),
      re(String.raw`какие\s+заметки\s+(?:говорят\s+о|упоминают|посвящены)\s+(.+)`),
    ],
  },
];

/**
 * Japanese, Chinese (simplified and traditional) and Korean. These scripts have no spaces between words, so
 * the patterns use no `\b` and allow optional spaces between the parts. Same rules as above: a request from
 * the start of the message (after politeness: "请", "帮我", "你能"…), a topic only with an explicit
 * "about" ("について", "に関する", "关于…的", "에 대한", "에 관한", "관련"), which is left out of the topic, and
 * the whole message for current-note summaries. A bare "X のノート" / "X 的笔记" / "X 노트" is not taken: the
 * X may be "この", "新的" or "새", which are not topics. Questions ("ノートを作成するにはどうすればいいですか",
 * "如何创建笔记", "노트를 어떻게 만들어요") never start with a request verb or its object, so they stay chat.
 */
const CJK_LEAD = String.raw`(?:(?:krypton|クリプトン|크립톤)\s*[,，、:：]\s*|(?:请你|請你|请|請|麻烦你|麻煩你|麻烦|麻煩|帮我|幫我|帮忙|幫忙|给我|給我|你能不能|你可不可以|你能|你可以|能不能|可不可以|能否|可以)\s*|(?:すみません|すいません|ねえ)\s*[、,，]?\s*)`;
/** Japanese: "…して(ください|くれる?|もらえますか|…)", or the noun with "お願いします". */
const jaDo = (teStems: string, nouns: string): string =>
  String.raw`(?:(?:${teStems})(?:て|で)(?:ください|下さい|くださいませんか|くれ(?:る|ない)?|ほしい|欲しい|ちょうだい|(?:くれ|もらえ|いただけ)(?:ます|ません)?か?|よ|ね)?|(?:${nouns})(?:を)?(?:お願い(?:します)?|して(?:ください|下さい))?)`;
const JA_ABOUT = String.raw`\s*(?:についての|について|に関しての|に関して|に関する|に関連する|関連の)\s*`;
const JA_NOTE = String.raw`(?:(?:私|自分|僕)の)?(?:(?:短い|簡単な|新しい|簡潔な)\s*)?(?:ノート|メモ)`;
const JA_THIS_NOTE = String.raw`(?:この|今の|現在の|開いている|開いてる|アクティブな)\s*(?:ノート|メモ|ページ|ファイル)`;
/** Chinese: "一个/一篇…", adjectives, and a sentence-final "吧"/"吗"/"好吗". */
const ZH_ONE = String.raw`(?:一下)?\s*(?:一?(?:个|個|篇|份|条|條|则|則))?\s*(?:(?:新的|新|简短的|簡短的|简单的|簡單的|简要的|簡要的)\s*)?`;
const ZH_ABOUT = String.raw`(?:关于|關於|有关|有關)`;
const ZH_NOTE = String.raw`(?:(?:新|简短|簡短|简单|簡單|简要|簡要)的?\s*)?(?:笔记|筆記|笔記)`;
const ZH_END = String.raw`(?:吧|吗|嗎|好吗|好嗎|好不好|可以吗|可以嗎)?`;
const ZH_THIS_NOTE = String.raw`(?:这|這|当前|當前|目前|现在|現在|打开的|打開的)\s*(?:一?(?:个|個|篇|份))?\s*(?:的)?\s*(?:笔记|筆記|笔記|文档|文檔|页面|頁面)`;
const ZH_SUMMARIZE = String.raw`(?:总结|總結|概括|摘要|归纳|歸納|汇总|彙總|概述)(?:一下)?`;
/** Korean: "…해 줘", "…해 주세요", "…해 줄래요?", "…해 줄 수 있어요?". */
const koDo = (stems: string): string =>
  String.raw`(?:${stems})(?:\s*(?:줘요|줘|주세요|주십시오|줄래요|줄래|주라|주실래요|주시겠어요|주겠니|줄\s*수\s*있(?:어요|어|나요|니|습니까)))?`;
const KO_ABOUT = String.raw`\s*(?:에\s*대한|에\s*대해서|에\s*대해|에\s*관한|에\s*관해서|에\s*관해|에\s*관련된|관련)\s*`;
const KO_NOTE = String.raw`(?:(?:내|제|나의)\s*)?(?:(?:모든|새|새로운|짧은|간단한)\s*)?(?:노트|메모)(?:들)?(?:를|을)?`;
const KO_THIS_NOTE = String.raw`(?:이|현재|지금|열린|열려\s*있는)\s*(?:노트|메모|문서|페이지)(?:를|을)?`;

const CJK: { intent: IntentKind; patterns: RegExp[] }[] = [
  {
    intent: "create-note",
    patterns: [
      // ja: 潮汐についてのノートを作成して / 潮汐に関するメモを書いてください ("まとめて" summarizes: below)
      cjk(String.raw`(.+?)${JA_ABOUT}${JA_NOTE}\s*(?:を)?\s*${jaDo("作成し|作っ|つくっ|書い|かい", "作成")}`),
      // zh: 创建一个关于潮汐的笔记 / 寫一篇關於潮汐的筆記
      cjk(String.raw`(?:创建|創建|新建|建立|写|寫|做|生成|撰写|撰寫|记|記)${ZH_ONE}${ZH_ABOUT}\s*(.+?)\s*的\s*${ZH_NOTE}${ZH_END}`),
      // ko: 조수에 대한 노트를 만들어 줘 / 조수에 관한 메모를 작성해 주세요
      cjk(String.raw`(.+?)${KO_ABOUT}${KO_NOTE}\s*${koDo("만들어|작성해|써|생성해|적어")}`),
    ],
  },
  {
    intent: "summarize-note",
    patterns: [
      // ja: このノートを要約して / このノートをまとめてください
      cjk(String.raw`${JA_THIS_NOTE}\s*(?:を)?\s*${jaDo("要約し|まとめ", "要約")}`),
      // zh: 总结这篇笔记 / 把這篇筆記總結一下
      cjk(String.raw`${ZH_SUMMARIZE}\s*${ZH_THIS_NOTE}${ZH_END}`),
      cjk(String.raw`把\s*${ZH_THIS_NOTE}\s*${ZH_SUMMARIZE}${ZH_END}`),
      // ko: 이 노트를 요약해 줘
      cjk(String.raw`${KO_THIS_NOTE}\s*${koDo("요약해|정리해")}`),
    ],
  },
  {
    intent: "summarize-topic",
    patterns: [
      // ja: 睡眠についてのノートを要約して
      cjk(String.raw`(.+?)${JA_ABOUT}(?:すべての|全ての|全部の)?${JA_NOTE}\s*(?:を)?\s*${jaDo("要約し|まとめ", "要約")}`),
      // zh: 总结我关于睡眠的笔记
      cjk(String.raw`${ZH_SUMMARIZE}\s*(?:一下)?\s*(?:我的|我|所有|全部)?\s*${ZH_ABOUT}\s*(.+?)\s*的\s*(?:所有|全部)?\s*${ZH_NOTE}${ZH_END}`),
      // ko: 수면에 대한 노트를 요약해 줘
      cjk(String.raw`(.+?)${KO_ABOUT}${KO_NOTE}\s*${koDo("요약해|정리해")}`),
    ],
  },
  {
    intent: "search-notes",
    patterns: [
      // ja: ドッカーに関するノートを検索して / 探してください / 見つけて
      cjk(String.raw`(.+?)${JA_ABOUT}(?:すべての|全ての)?${JA_NOTE}\s*(?:を)?\s*${jaDo("検索し|探し|さがし|見つけ|みつけ|表示し|見せ", "検索")}`),
      // zh: 搜索关于docker的笔记 / 幫我找關於docker的筆記
      cjk(String.raw`(?:搜索|搜尋|搜寻|查找|寻找|尋找|找|查询|查詢|检索|檢索|列出|显示|顯示|给我看|給我看)(?:一下)?\s*(?:出)?\s*(?:所有|全部)?\s*(?:的)?\s*(?:我的)?\s*${ZH_ABOUT}\s*(.+?)\s*的\s*(?:所有|全部)?\s*${ZH_NOTE}${ZH_END}`),
      cjk(String.raw`(?:在|从|從)\s*(?:我的)?\s*${ZH_NOTE}\s*(?:中|里|裡|里面|裡面)\s*(?:搜索|搜尋|查找|寻找|尋找|找)(?:一下)?\s*(.+?)${ZH_END}`),
      cjk(String.raw`哪些\s*${ZH_NOTE}\s*(?:提到了|提到|提及|谈到了|談到了|谈到|談到|讲到|講到|涉及)\s*(.+?)`),
      // ko: 도커에 관한 노트를 검색해 줘 / 찾아 줘 / 보여 줘
      cjk(String.raw`(.+?)${KO_ABOUT}${KO_NOTE}\s*${koDo("검색해|찾아|보여")}`),
    ],
  },
];

const RULES: { intent: IntentKind; patterns: RegExp[] }[] = [
  {
    intent: "create-note",
    patterns: [
      re(String.raw`(?:create|make|write|generate|draft|start)\s+(?:me\s+)?${NOTE_ADJ}notes?\s+${ABOUT}\s+(.+)`),
    ],
  },
  {
    intent: "summarize-note",
    patterns: [
      re(String.raw`${SUMMARIZE}\s+${THIS_NOTE}`),
      re(String.raw`${A_SUMMARY}\s+${THIS_NOTE}`),
      re(String.raw`what(?:'s|\s+is)\s+${THIS_NOTE}\s+about`),
      re(String.raw`tl;?dr\s+(?:of\s+)?${THIS_NOTE}`),
    ],
  },
  {
    intent: "summarize-topic",
    patterns: [
      re(String.raw`${SUMMARIZE}\s+${MY_NOTES}\s+${ABOUT}\s+(.+)`),
      re(String.raw`${SUMMARIZE}\s+what\s+(?:my|the)\s+notes\s+say\s+${ABOUT}\s+(.+)`),
      re(String.raw`${A_SUMMARY}\s+${MY_NOTES}\s+${ABOUT}\s+(.+)`),
      re(String.raw`what\s+do\s+(?:all\s+)?(?:my|the)\s+notes\s+say\s+${ABOUT}\s+(.+)`),
    ],
  },
  {
    intent: "search-notes",
    patterns: [
      re(
        String.raw`(?:find|search\s+for|look\s+for|look\s+up|show|show\s+me|list|get|give\s+me)\s+(?:me\s+)?(?:all\s+)?(?:(?:of\s+)?(?:my|the)\s+)?notes?\s+(?:on|about|regarding|mentioning|that\s+mention|that\s+talk\s+about|related\s+to|containing|with)\s+(.+)`,
      ),
      re(String.raw`search\s+(?:through\s+|in\s+)?(?:all\s+)?(?:(?:of\s+)?my\s+|the\s+)?(?:notes|vault)\s+(?:for|about|on)\s+(.+)`),
      re(
        String.raw`which\s+(?:of\s+my\s+)?notes\s+(?:talk\s+about|mention|discuss|cover|are\s+about|contain|reference|say\s+something\s+about)\s+(.+)`,
      ),
      re(String.raw`do\s+i\s+have\s+(?:any\s+)?notes\s+(?:on|about|regarding|mentioning)\s+(.+)`),
    ],
  },
  ...OTHER_LANGUAGES,
  ...CJK,
];

/** The intent of a chat message, or null when it is not a request an agent handles. */
export function detectIntent(message: string): DetectedIntent | null {
  // A request is one short sentence; a long message is a chat message (and never costs a regex scan).
  if (message.length > MAX_MESSAGE_CHARS) return null;
  const text = normalizeMessage(message);
  if (!text) return null;
  for (const rule of RULES) {
    for (const pattern of rule.patterns) {
      const m = pattern.exec(text);
      if (!m) continue;
      if (rule.intent === "summarize-note") return { intent: rule.intent, argument: "", source: "patterns" };
      const argument = cleanArgument(m[1] ?? "");
      if (!argument || argument.length > MAX_ARGUMENT_CHARS || POINTS_AT_CONVERSATION.test(argument) || POINTS_AT_CONVERSATION_OTHER.test(argument) || POINTS_AT_CONVERSATION_CJK.test(argument)) return null;
      return { intent: rule.intent, argument, source: "patterns" };
    }
  }
  return null;
}

/** One line, straight quotes, no trailing punctuation or trailing politeness. */
export function normalizeMessage(message: string): string {
  let text = message.replace(/^[¿¡]+/u, "").replace(/[\u2018\u2019]/g, "'").replace(/[\u201c\u201d]/g, '"').replace(/\s+/g, " ").trim();
  // Repeated, because "… for me, please?" has two.
  for (let i = 0; i < 3; i++) {
    text = text
      .replace(/[\s.!?…。！？．～]+$/u, "")
      .replace(/[\s,，、]*(?:谢谢|謝謝|ありがとう(?:ございます)?|감사합니다|고마워요?)$/u, "")
      .replace(/[\s,]+(?:please|pls|for\s+me|thanks|thank\s+you|por\s+favor|gracias|s'il\s+(?:te|vous)\s+pla[îi]t|merci|bitte|danke|per\s+favore|grazie|obrigad[oa]|пожалуйста|спасибо)$/iu, "")
      .trim();
  }
  return text;
}

/** Strips quotes and brackets around a topic ("'AWS'", "[[AWS]]") and trailing punctuation. */
export function cleanArgument(raw: string): string {
  let arg = raw.trim().replace(/[\s.!?,;:…。！？，、；：]+$/u, "");
  for (let i = 0; i < 2; i++) {
    const wrapped = /^(?:"(.*)"|'(.*)'|`(.*)`|\[\[(.*)\]\]|\*\*(.*)\*\*|「(.*)」|『(.*)』|《(.*)》)$/su.exec(arg);
    if (!wrapped) break;
    arg = (wrapped.slice(1).find((g) => g !== undefined) ?? "").trim();
  }
  return arg;
}

function re(body: string): RegExp {
  return new RegExp(`${LEAD}${body}$`, "iu");
}

/** A Japanese, Chinese or Korean request: the same politeness, or theirs, before it. */
function cjk(body: string): RegExp {
  return new RegExp(`${LEAD}${CJK_LEAD}*${body}$`, "iu");
}

/*
 * Study requests: flashcards, quiz, study goals. Same mechanism as the note requests above (the same
 * politeness LEAD, normalisation, whole-message patterns and argument cleaning), each a table of patterns
 * whose named groups carry the arguments: `topic`, `count`, `goal`, `target`, `amount`. Their agents
 * (src/core/flashcards, src/core/quiz, src/core/goals) ask these functions and act.
 */

/** "make flashcards about photosynthesis", "generate 5 flashcards from this note". Topic null: the active note. */
export interface FlashcardIntent {
  topic: string | null;
  max?: number;
}

/** A study-goal request; `amount` of a log is the duration as typed ("1h 15m"), for the goal agent to read. */
export type GoalRequest =
  | { type: "create"; goal: string; target?: string }
  | { type: "log"; amount: string; goal: string }
  | { type: "list" }
  | { type: "progress"; goal: string }
  | { type: "plan"; goal: string };

/**
 * A study request as the classifier found it (the study agents run their own patterns otherwise): its agent
 * (flashcards, quiz, study goals) acts on it.
 */
export type StudyIntent =
  | { intent: "flashcards"; request: FlashcardIntent; source: "classifier" }
  | { intent: "quiz"; topic: string; source: "classifier" }
  | { intent: "study-goal"; request: GoalRequest; source: "classifier" };

/** Any intent the classifier can answer with: a note request or a study request. */
export type RoutedIntent = DetectedIntent | StudyIntent;

const MAX_STUDY_MESSAGE_CHARS = 400;

const EN_CARD_COUNT = String.raw`(?:(?:some|a\s+few|a\s+set\s+of|(?<count>\d{1,2}))\s+)?`;
const EN_CARDS = String.raw`(?:flash\s?cards?|anki\s+cards|cards)`;
const EN_CARD_VERB = String.raw`(?:make|create|generate|write|build|give)\s+(?:me\s+)?`;
const EN_THIS_NOTE = /^(?:this|the\s+current|the\s+open|the\s+active|my\s+current|current)\s+(?:note|page|document|file)$/i;

/**
 * The other languages' "this note" ("esta nota", "diese Notiz", "этой заметки", "このノート", "这篇笔记", "이 노트"):
 * flashcards from the active note.
 */
const THIS_NOTE_OTHER =
  /^(?:(?:esta|essa|la)\s+nota(?:\s+actual|\s+atual)?|(?:cette|la)\s+note(?:\s+actuelle)?|(?:dieser|diese|der\s+aktuellen|die\s+aktuelle)\s+notiz|questa\s+nota|(?:этой|эту|текущей|текущую)\s+заметк[иуе]|(?:この|今の|現在の)ノート|(?:这|這|当前|當前)(?:篇|个|個)?(?:笔记|筆記)|(?:이|현재)\s*노트)$/iu;

/** Leading articles a topic loses in the other languages ("sobre las mareas" → "mareas"). */
const ES_ART = String.raw`(?:(?:el|la|los|las)\s+)?`;
const FR_ART = String.raw`(?:(?:le|la|les)\s+|l'\s*)?`;
const DE_CARD_ABOUT = String.raw`(?:[üu]ber|zu|zum|zur|aus)\s+(?:(?:die|der|den|dem|das)\s+)?(?:thema\s+)?`;
const PT_ART = String.raw`(?:(?:o|a|os|as)\s+)?`;
const IT_ABOUT = String.raw`(?:(?:su|di|da|riguardo\s+a)\s+(?:(?:il|lo|la|i|gli|le)\s+|l'\s*)?|(?:sul|sullo|sulla|sui|sugli|sulle|del|dello|della|dei|degli|delle|dal|dalla)\s+|(?:sull|dell|dall)'\s*)`;
const RU_ABOUT = String.raw`(?:о|об|обо|про|по|на\s+тему|из)`;
const ES_CARDS = String.raw`(?:tarjetas(?:\s+de\s+(?:estudio|memoria|repaso)(?!$))?|fichas(?:\s+de\s+estudio(?!$))?|flashcards?)`;
const FR_CARDS = String.raw`(?:flashcards?|fiches(?:\s+de\s+r[ée]vision)?|cartes(?:\s+m[ée]moire)?)`;
const DE_CARDS = String.raw`(?:karteikarten|lernkarten|flashcards|flash-karten)`;
const PT_CARDS = String.raw`(?:flashcards?|cart[õo]es(?:\s+de\s+estudo(?!$))?|fichas)`;
const IT_CARDS = String.raw`(?:flashcards?|schede(?:\s+di\s+studio)?|carte)`;
const RU_CARDS = String.raw`(?:карточки|карточек|флеш-?карточки|флеш-?карточек|флешкарты|флешкарт)`;
const JA_CARDS = String.raw`(?:フラッシュカード|単語カード|暗記カード|学習カード|カード)`;
const ZH_CARDS = String.raw`(?:抽认卡|抽認卡|闪卡|閃卡|闪记卡|閃記卡|记忆卡片?|記憶卡片?|学习卡片?|學習卡片?|卡片)`;
const KO_CARDS = String.raw`(?:플래시\s*카드|암기\s*카드|학습\s*카드|카드)(?:를|을)?`;
const COUNT_N = String.raw`(?<count>\d{1,2})`;

/**
 * Each language's "make" verbs and its cards without the `(?!$)` guard: a bare request ("haz tarjetas de
 * estudio") has no topic after the cards, so their longer names may end the message.
 */
const ES_MAKE = String.raw`(?:haz|hazme|hacer|crea|cr[ée]ame|crear|genera|gen[ée]rame|generar|escribe|escr[íi]beme)`;
const ES_CARDS_BARE = String.raw`(?:tarjetas(?:\s+de\s+(?:estudio|memoria|repaso))?|fichas(?:\s+de\s+estudio)?|flashcards?)`;
const FR_MAKE = String.raw`(?:cr[ée]e|cr[ée]er|fais|faire|g[ée]n[èe]re|g[ée]n[ée]rer|[ée]cris)(?:-moi)?`;
const DE_MAKE = String.raw`(?:erstelle|erstell|mache|mach|generiere|schreibe|schreib)`;
const DE_MAKE_LAST = String.raw`(?:erstellen|machen|generieren|schreiben)`;
const DE_SOME = String.raw`(?:(?:ein\s+paar|einige|${COUNT_N})\s+)?`;
const PT_MAKE = String.raw`(?:fa[çc]a|faz|fazer|crie|cria|criar|gere|gera|gerar|escreva)(?:-me)?`;
const PT_CARDS_BARE = String.raw`(?:flashcards?|cart[õo]es(?:\s+de\s+estudo)?|fichas)`;
const IT_MAKE = String.raw`(?:crea|creami|fai|fammi|genera|generami|scrivi|scrivimi|${IT_CAN}\s+(?:creare|fare|generare))`;
const RU_MAKE = String.raw`(?:сделай|сделайте|создай|создайте|составь|составьте|сгенерируй|${RU_CAN}\s+(?:сделать|создать|составить|сгенерировать))`;
const JA_MAKE = jaDo("作成し|作っ|つくっ", "作成");
const ZH_MAKE = String.raw`(?:制作|製作|创建|創建|生成|做|写|寫)(?:一下)?`;
const ZH_SOME = String.raw`(?:${COUNT_N}\s*(?:张|張|个|個)|一些|一套|几张|幾張)?`;
const KO_MAKE = koDo("만들어|생성해|작성해");

/** Per language: the bare request first (no topic: the open note), then the one with a topic. */
const FLASHCARD_PATTERNS: RegExp[] = [
  re(String.raw`${EN_CARD_VERB}${EN_CARD_COUNT}${EN_CARDS}`),
  re(String.raw`${EN_CARD_VERB}${EN_CARD_COUNT}${EN_CARDS}\s+(?:about|on|for|from|covering|of)\s+(?<topic>.+)`),
  // es: haz tarjetas / haz tarjetas sobre las mareas / crea 5 flashcards de esta nota
  re(String.raw`${ES_MAKE}\s+(?:(?:unas|algunas|${COUNT_N})\s+)?${ES_CARDS_BARE}`),
  re(String.raw`${ES_MAKE}\s+(?:(?:unas|algunas|${COUNT_N})\s+)?${ES_CARDS}\s+(?:sobre|acerca\s+de|de)\s+${ES_ART}(?<topic>.+)`),
  // fr: crée des flashcards / crée des flashcards sur les marées / fais-moi 5 fiches de révision sur …
  re(String.raw`${FR_MAKE}\s+(?:(?:des|quelques|${COUNT_N})\s+)?${FR_CARDS}`),
  re(String.raw`${FR_MAKE}\s+(?:(?:des|quelques|${COUNT_N})\s+)?${FR_CARDS}\s+(?:(?:sur|[àa]\s+propos\s+de|de|depuis)\s+${FR_ART}|(?:du|des|[àa]\s+propos\s+(?:du|des))\s+)(?<topic>.+)`),
  // de: erstelle Karteikarten / erstelle Karteikarten über Gezeiten / mach mir 5 Lernkarten zu …
  re(String.raw`${DE_MAKE}\s+${DE_ASIDE}${DE_SOME}${DE_CARDS}`),
  re(String.raw`${DE_MAKE}\s+${DE_ASIDE}${DE_SOME}${DE_CARDS}\s+${DE_CARD_ABOUT}(?<topic>.+)`),
  // de, the verb last after "kannst du" (LEAD): … Karteikarten (über Gezeiten) erstellen?
  re(String.raw`${DE_ASIDE}${DE_SOME}${DE_CARDS}\s+${DE_MAKE_LAST}`),
  re(String.raw`${DE_ASIDE}${DE_SOME}${DE_CARDS}\s+${DE_CARD_ABOUT}(?<topic>.+?)\s+${DE_MAKE_LAST}`),
  // pt: faça flashcards / faça flashcards sobre marés / crie 5 cartões sobre a fotossíntese
  re(String.raw`${PT_MAKE}\s+(?:(?:alguns|algumas|${COUNT_N})\s+)?${PT_CARDS_BARE}`),
  re(String.raw`${PT_MAKE}\s+(?:(?:alguns|algumas|${COUNT_N})\s+)?${PT_CARDS}\s+(?:(?:sobre|acerca\s+de|de)\s+${PT_ART}|(?:da|do|das|dos)\s+)(?<topic>.+)`),
  // it: crea delle flashcard / crea flashcard sulle maree / fammi 5 schede su …
  re(String.raw`${IT_MAKE}\s+(?:(?:delle|alcune|qualche|${COUNT_N})\s+)?${IT_CARDS}`),
  re(String.raw`${IT_MAKE}\s+(?:(?:delle|alcune|qualche|${COUNT_N})\s+)?${IT_CARDS}\s+${IT_ABOUT}(?<topic>.+)`),
  // ru: сделай карточки / сделай карточки про приливы / создай 5 карточек по этой заметке
  re(String.raw`${RU_MAKE}\s+(?:(?:несколько|${COUNT_N})\s+)?${RU_CARDS}`),
  re(String.raw`${RU_MAKE}\s+(?:(?:несколько|${COUNT_N})\s+)?${RU_CARDS}\s+${RU_ABOUT}\s+(?<topic>.+)`),
  // ja: フラッシュカードを作って / 潮汐についてのフラッシュカードを作って / このノートからフラッシュカードを5枚作成して
  cjk(String.raw`${JA_CARDS}\s*(?:を)?\s*(?:${COUNT_N}\s*(?:枚|個)\s*)?${JA_MAKE}`),
  cjk(String.raw`(?<topic>.+?)(?:${JA_ABOUT}|\s*から\s*)(?:の)?${JA_CARDS}\s*(?:を)?\s*(?:${COUNT_N}\s*(?:枚|個)\s*)?${JA_MAKE}`),
  // zh: 制作抽认卡 / 制作关于潮汐的抽认卡 / 帮我做5张关于潮汐的闪卡
  cjk(String.raw`${ZH_MAKE}\s*${ZH_SOME}\s*${ZH_CARDS}${ZH_END}`),
  cjk(String.raw`${ZH_MAKE}\s*${ZH_SOME}\s*${ZH_ABOUT}\s*(?<topic>.+?)\s*的\s*${ZH_CARDS}${ZH_END}`),
  cjk(String.raw`(?:根据|根據|用)\s*(?<topic>.+?)\s*(?:制作|製作|生成|做)(?:一下)?\s*(?:${COUNT_N}\s*(?:张|張|个|個)|一些)?\s*${ZH_CARDS}${ZH_END}`),
  // ko: 플래시카드 만들어 줘 / 조수에 대한 플래시카드 만들어 줘 / 이 노트로 카드 5개 만들어 주세요
  cjk(String.raw`${KO_CARDS}\s*(?:${COUNT_N}\s*(?:개|장)\s*)?${KO_MAKE}`),
  cjk(String.raw`(?<topic>.+?)(?:${KO_ABOUT}|\s*(?:으로|로|에서)\s+)${KO_CARDS}\s*(?:${COUNT_N}\s*(?:개|장)\s*)?${KO_MAKE}`),
];

const QUIZ_PATTERNS: RegExp[] = [
  re(String.raw`(?:quiz|test)\s+me\s+(?:on|about)\s+(?<topic>.+)`),
  re(String.raw`(?:start|begin)\s+(?:a\s+)?quiz\s+(?:on|about)\s+(?<topic>.+)`),
  // es: pregúntame sobre las mareas / hazme un quiz de AWS
  re(String.raw`(?:preg[úu]ntame|exam[íi]name|ponme\s+a\s+prueba|hazme\s+(?:un\s+)?(?:quiz|test|examen|cuestionario))\s+(?:sobre|acerca\s+de|de)\s+${ES_ART}(?<topic>.+)`),
  // fr: interroge-moi sur les marées / fais-moi un quiz sur AWS
  re(String.raw`(?:interroge|questionne|teste)-moi\s+(?:sur\s+${FR_ART}|[àa]\s+propos\s+(?:de\s+${FR_ART}|du\s+|des\s+))(?<topic>.+)`),
  re(String.raw`(?:fais|lance|commence)(?:-moi)?\s+un\s+quiz\s+(?:sur\s+${FR_ART}|de\s+${FR_ART}|du\s+|des\s+)(?<topic>.+)`),
  // de: frag mich zu Gezeiten / teste mich über … / starte ein Quiz zu …; "kannst du mich zu Gezeiten abfragen?"
  re(String.raw`(?:frag|frage|teste|test|pr[üu]f|pr[üu]fe)\s+mich\s+${DE_ASIDE}${DE_CARD_ABOUT}(?<topic>.+?)(?:\s+ab)?`),
  re(String.raw`(?:starte|start|mach|mache)\s+${DE_ASIDE}(?:ein\s+)?quiz\s+${DE_CARD_ABOUT}(?<topic>.+)`),
  re(String.raw`mich\s+${DE_ASIDE}${DE_CARD_ABOUT}(?<topic>.+?)\s+(?:abfragen|testen|pr[üu]fen)`),
  // pt: me pergunte sobre as marés / faça um quiz sobre AWS
  re(String.raw`(?:me\s+pergunte|pergunte-me|me\s+teste|teste-me|me\s+fa[çc]a\s+um\s+quiz|fa[çc]a(?:-me)?\s+um\s+quiz)\s+(?:(?:sobre|de)\s+${PT_ART}|(?:da|do|das|dos)\s+)(?<topic>.+)`),
  // it: interrogami sulle maree / fammi un quiz su AWS
  re(String.raw`(?:interrogami|testami|mettimi\s+alla\s+prova|fammi\s+(?:delle\s+)?domande|fammi\s+un\s+quiz)\s+${IT_ABOUT}(?<topic>.+)`),
  // ru: проверь меня по приливам / спроси меня про приливы / устрой мне тест по …
  re(String.raw`(?:проверь|проверьте|протестируй|погоняй|спроси|спросите)\s+меня\s+${RU_ABOUT}\s+(?<topic>.+)`),
  re(String.raw`(?:устрой|начни|сделай|проведи)\s+(?:мне\s+)?(?:тест|викторину|квиз|опрос)\s+${RU_ABOUT}\s+(?<topic>.+)`),
  // ja: 潮汐についてクイズを出して / 潮汐のクイズを出してください
  cjk(String.raw`(?<topic>.+?)(?:${JA_ABOUT}|の)(?:私に)?\s*(?:クイズ|問題|テスト)\s*(?:を)?\s*${jaDo("出し|出題し", "出題")}`),
  // zh: 考考我关于潮汐的知识 / 就潮汐测验我一下
  cjk(String.raw`(?:考考我|考我|测验我|測驗我|测试我|測試我)\s*(?:一下)?\s*${ZH_ABOUT}\s*(?<topic>.+?)(?:\s*的\s*(?:知识|知識|内容|內容))?${ZH_END}`),
  cjk(String.raw`(?:用|就)\s*(?<topic>.+?)\s*(?:考考我|考我|测验我|測驗我|测试我|測試我)(?:一下)?${ZH_END}`),
  // ko: 조수에 대한 퀴즈 내 줘 / 조수에 대해 퀴즈를 내 주세요
  cjk(String.raw`(?<topic>.+?)${KO_ABOUT}(?:퀴즈|문제|테스트)(?:를|을)?\s*${koDo("내|출제해")}`),
];

/** "<goal> by <date>" after "study goal" (":" optional), per language. */
const GOAL_BY = (by: string): string => String.raw`\s*[:\-–]?\s*(?<goal>.+?)(?:\s+${by}\s+(?<target>.+))?`;
/** A date whose month is a number, as Japanese, Chinese and Korean write it: "2027年12月15日", "12월 15일". */
const CJK_DATE = String.raw`(?:\d{4}\s*[年년]\s*)?\d{1,2}\s*[月월]\s*\d{1,2}\s*(?:日|号|號|일)?`;
/**
 * The target after a Japanese, Chinese or Korean goal: after its "deadline" word ("、期限：12月15日"), or a date
 * with "until" ending the message ("AWSに合格 12月15日まで", "通过AWS 12月15日之前", "AWS 합격 12월 15일까지").
 */
const CJK_BY = (deadline: string, until: string): string =>
  String.raw`(?:(?:\s*[,，、]\s*(?:${deadline})\s*[:：]?\s*|\s*[,，、]?\s*(?=${CJK_DATE}\s*(?:${until})$))(?<target>.+))?`;
/** A duration as the goal agent reads it: a number first ("30 minutes", "1h 15m", "30 минут", "30分"). */
const AMOUNT = String.raw`(?<amount>\d.*?)`;

const GOAL_PATTERNS: { type: GoalRequest["type"]; patterns: RegExp[] }[] = [
  {
    type: "create",
    patterns: [
      re(String.raw`(?:set|add|create|new)\s+(?:a\s+|my\s+)?(?:new\s+)?study\s+goal\s*[:\-–]?\s*(?<goal>.+?)(?:\s+by\s+(?<target>.+))?`),
      // es: fija un objetivo de estudio: aprobar AWS para el 2027-01-15
      re(String.raw`(?:fija|establece|crea|pon|a[ñn]ade|agrega|define)(?:me)?\s+(?:un\s+)?(?:nuevo\s+)?(?:objetivo|meta)\s+de\s+estudio${GOAL_BY(String.raw`(?:para\s+el|antes\s+del|hasta\s+el)`)}`),
      // fr: fixe un objectif d'étude : réussir AWS d'ici le 2027-01-15
      re(String.raw`(?:fixe|d[ée]finis|cr[ée]e|ajoute|mets)(?:-moi)?\s+(?:un\s+)?(?:nouvel\s+)?objectif\s+d'[ée]tudes?${GOAL_BY(String.raw`(?:d'ici(?:\s+le)?|pour\s+le|avant\s+le)`)}`),
      // de: setze ein Lernziel: AWS bestehen bis 2027-01-15
      re(String.raw`(?:setze|setz|lege|leg|erstelle|erstell|f[üu]ge)\s+${DE_ASIDE}(?:ein\s+)?(?:neues\s+)?lernziel(?:\s+fest|\s+an|\s+hinzu)?${GOAL_BY(String.raw`(?:bis(?:\s+zum)?)`)}`),
      // pt: defina uma meta de estudo: passar no AWS até 2027-01-15
      re(String.raw`(?:defina|define|crie|cria|adicione|estabele[çc]a)\s+(?:uma\s+|um\s+)?(?:nova\s+|novo\s+)?(?:meta|objetivo)\s+de\s+estudos?${GOAL_BY(String.raw`(?:at[ée](?:\s+(?:o\s+dia|dia))?)`)}`),
      // it: imposta un obiettivo di studio: superare AWS entro il 2027-01-15
      re(String.raw`(?:imposta|fissa|crea|aggiungi|${IT_CAN}\s+(?:impostare|fissare|creare))\s+(?:un\s+)?(?:nuovo\s+)?obiettivo\s+di\s+studio${GOAL_BY(String.raw`(?:entro(?:\s+il)?)`)}`),
      // ru: поставь учебную цель: сдать AWS до 2027-01-15
      re(String.raw`(?:поставь|поставьте|создай|создайте|добавь|добавьте|задай|задайте|${RU_CAN}\s+(?:поставить|создать|добавить))\s+(?:новую\s+)?(?:учебную\s+цель|цель\s+обучения)${GOAL_BY("(?:до|к)")}`),
      // ja: 学習目標を設定して：AWSに合格 / zh: 设定学习目标：通过AWS / ko: 학습 목표 설정해 줘: AWS 합격
      cjk(String.raw`(?:学習目標|勉強の目標)\s*(?:を)?\s*${jaDo("設定し|立て|作っ", "設定")}\s*[:：]\s*(?<goal>.+?)${CJK_BY("期限|締め切り", "までに|まで")}`),
      cjk(String.raw`(?:设定|設定|设置|設置|添加|新建|定)(?:一个|一個)?\s*(?:新的)?\s*(?:学习目标|學習目標)\s*[:：]\s*(?<goal>.+?)${CJK_BY("截止(?:日期)?|期限", "之前|以前|前")}`),
      cjk(String.raw`(?:학습|공부)\s*목표(?:를|을)?\s*${koDo("설정해|만들어|세워")}\s*[:：]\s*(?<goal>.+?)${CJK_BY("기한|마감", "까지")}`),
    ],
  },
  {
    type: "list",
    patterns: [
      re(String.raw`(?:what\s+are|show(?:\s+me)?|list)\s+(?:all\s+)?my\s+study\s+goals`),
      re(String.raw`(?:cu[áa]les\s+son|mu[ée]strame|muestra|lista)\s+(?:todos\s+)?mis\s+(?:objetivos|metas)\s+de\s+estudio`),
      re(String.raw`(?:quels\s+sont|montre(?:-moi)?|liste)\s+(?:tous\s+)?mes\s+objectifs\s+d'[ée]tudes?`),
      re(String.raw`(?:was\s+sind|zeige|zeig|liste)\s+${DE_ASIDE}(?:alle\s+)?meine\s+lernziele(?:\s+an)?`),
      re(String.raw`(?:quais\s+s[ãa]o|mostre|mostra|liste)(?:-me)?\s+(?:todas\s+|todos\s+)?(?:as\s+|os\s+)?(?:minhas\s+metas|meus\s+objetivos)\s+de\s+estudos?`),
      re(String.raw`(?:quali\s+sono|mostrami|elenca)\s+(?:tutti\s+)?i\s+miei\s+obiettivi\s+di\s+studio`),
      re(String.raw`(?:какие\s+у\s+меня|покажи|перечисли)\s+(?:все\s+)?(?:мои\s+)?учебные\s+цели`),
      cjk(String.raw`(?:私の)?(?:学習目標|勉強の目標)\s*(?:を)?\s*${jaDo("見せ|表示し", "一覧")}`),
      cjk(String.raw`(?:显示|顯示|列出|查看|给我看|給我看)(?:一下)?\s*(?:我的)?\s*(?:所有)?\s*(?:学习目标|學習目標)${ZH_END}`),
      cjk(String.raw`(?:내|제)\s*(?:학습|공부)\s*목표(?:들)?(?:를|을)?\s*${koDo("보여|알려")}`),
    ],
  },
  {
    type: "progress",
    patterns: [
      re(String.raw`(?:how\s+am\s+i\s+doing|how'?s\s+my\s+progress|what'?s\s+my\s+progress)\s+(?:on|with|for)\s+(?<goal>.+)`),
      re(String.raw`(?:c[óo]mo\s+voy|cu[áa]l\s+es\s+mi\s+progreso)\s+(?:con|en)\s+${ES_ART}(?<goal>.+)`),
      re(String.raw`o[uù]\s+en\s+suis-je\s+(?:avec|sur|pour)\s+${FR_ART}(?<goal>.+)`),
      re(String.raw`wie\s+(?:komme\s+ich\s+voran|steht\s+es)\s+mit\s+(?:(?:die|der|den|dem|das)\s+)?(?<goal>.+)`),
      re(String.raw`como\s+(?:estou|vou)\s+(?:indo\s+)?(?:em|com|n[ao]s?)\s+(?<goal>.+)`),
      re(String.raw`come\s+sto\s+andando\s+(?:(?:con|in)\s+|${IT_ABOUT})(?<goal>.+)`),
      re(String.raw`как\s+(?:мои\s+успехи|у\s+меня\s+дела|продвигается)\s+(?:с|по|в)\s+(?<goal>.+)`),
      cjk(String.raw`(?<goal>.+?)\s*の\s*進捗\s*(?:は|を)?\s*(?:どう(?:ですか)?|${jaDo("見せ|教え", "確認")})`),
      cjk(String.raw`(?:我的)?\s*(?<goal>.+?)\s*(?:进度|進度|进展|進展)(?:怎么样|怎麼樣|如何)${ZH_END}`),
      cjk(String.raw`(?<goal>.+?)\s*(?:진행\s*상황|진도)(?:은|는|을|를)?\s*(?:어때(?:요)?|${koDo("보여|알려")})`),
    ],
  },
  {
    type: "plan",
    patterns: [
      re(String.raw`plan\s+(?:my|the|this)\s+week\s+(?:for|on)\s+(?<goal>.+)`),
      re(String.raw`(?:planifica|planea|organiza)(?:me)?\s+(?:mi|la|esta)\s+semana\s+(?:para|de)\s+${ES_ART}(?<goal>.+)`),
      re(String.raw`(?:planifie|organise)(?:-moi)?\s+(?:ma|la|cette)\s+semaine\s+(?:pour|sur)\s+${FR_ART}(?<goal>.+)`),
      re(String.raw`(?:plane|plan)\s+${DE_ASIDE}(?:meine|die|diese)\s+woche\s+f[üu]r\s+(?:(?:die|der|den|das)\s+)?(?<goal>.+)`),
      re(String.raw`(?:planeje|planeja|organize|organiza)\s+(?:a\s+)?(?:minha|esta|a)\s+semana\s+(?:para|de)\s+${PT_ART}(?<goal>.+)`),
      re(String.raw`(?:pianifica|organizza)\s+(?:la\s+)?(?:mia|questa)\s+settimana\s+(?:per|su)\s+(?<goal>.+)`),
      re(String.raw`(?:спланируй|распланируй|составь\s+план\s+на)\s+(?:мою|эту)?\s*неделю\s+(?:для|по)\s+(?<goal>.+)`),
      cjk(String.raw`(?<goal>.+?)\s*(?:のため)?の\s*(?:今週|一週間|1週間)の(?:計画|予定)\s*(?:を)?\s*${jaDo("立て|作っ", "作成")}`),
      cjk(String.raw`(?:为|為|给|給)\s*(?<goal>.+?)\s*(?:制定|安排|规划|規劃|计划|計劃)(?:一下)?\s*(?:这周|這週|本周|本週|一周|一週)的?\s*(?:计划|計劃|学习计划|學習計劃)?${ZH_END}`),
      cjk(String.raw`(?<goal>.+?)\s*(?:을|를)?\s*위한\s*(?:이번\s*주|한\s*주)\s*(?:계획|일정)(?:을|를)?\s*${koDo("세워|짜|만들어")}`),
    ],
  },
  {
    type: "log",
    patterns: [
      re(String.raw`(?:log|add|record|track)\s+(?<amount>.+?)\s+(?:on|for|to)\s+(?<goal>.+)`),
      re(String.raw`(?:registra|anota|apunta|a[ñn]ade)\s+${AMOUNT}\s+(?:en|a|para|de)\s+${ES_ART}(?<goal>.+)`),
      re(String.raw`(?:enregistre|note|ajoute|compte)\s+${AMOUNT}\s+(?:sur|pour|[àa]|en)\s+${FR_ART}(?<goal>.+)`),
      re(String.raw`(?:trage|trag|erfasse|buche|notiere)\s+${DE_ASIDE}${AMOUNT}\s+(?:f[üu]r|bei|zu|zum|zur|auf)\s+(?:(?:die|der|den|dem|das)\s+)?(?<goal>.+?)(?:\s+ein)?`),
      re(String.raw`(?:registre|registra|anote|anota|adicione)\s+${AMOUNT}\s+(?:em|para|de|n[ao]s?)\s+(?<goal>.+)`),
      re(String.raw`(?:registra|segna|aggiungi|annota)\s+${AMOUNT}\s+(?:su|per|a|in|di)\s+(?<goal>.+)`),
      re(String.raw`(?:запиши|засчитай|добавь|отметь)\s+${AMOUNT}\s+(?:на|по|в|для|к)\s+(?<goal>.+)`),
      cjk(String.raw`(?<goal>.+?)\s*に\s*${AMOUNT}\s*(?:を)?\s*${jaDo("記録し|追加し", "記録")}`),
      cjk(String.raw`(?:给|給|为|為)\s*(?<goal>.+?)\s*(?:记录|記錄|记|記|添加)(?:上)?\s*${AMOUNT}${ZH_END}`),
      cjk(String.raw`(?<goal>.+?)(?:에|에다)\s+${AMOUNT}\s*(?:을|를)?\s*${koDo("기록해|추가해")}`),
    ],
  },
];

/** The first pattern matching the whole (normalised) message, or null. */
function firstMatch(message: string, patterns: RegExp[]): Record<string, string | undefined> | null {
  if (message.length > MAX_STUDY_MESSAGE_CHARS) return null;
  const text = normalizeMessage(message);
  if (!text) return null;
  for (const pattern of patterns) {
    const m = pattern.exec(text);
    if (m) return m.groups ?? {};
  }
  return null;
}

export function detectFlashcardIntent(message: string): FlashcardIntent | null {
  const g = firstMatch(message, FLASHCARD_PATTERNS);
  if (!g) return null;
  const max = g.count ? { max: Number(g.count) } : {};
  if (g.topic === undefined) return { topic: null, ...max };
  const topic = cleanArgument(g.topic);
  if (!topic || topic.length > MAX_ARGUMENT_CHARS) return null;
  if (EN_THIS_NOTE.test(topic) || THIS_NOTE_OTHER.test(topic)) return { topic: null, ...max };
  return { topic, ...max };
}

/** "quiz me on AWS": the deck (or topic) name, or null. */
export function detectQuizIntent(message: string): string | null {
  const g = firstMatch(message, QUIZ_PATTERNS);
  return g ? cleanArgument(g.topic ?? "") || null : null;
}

/** Goal names lose the quotes, brackets and end punctuation a chat message wraps them in ("Pass AWS"), as other agents' arguments do. */
export function detectGoalRequest(message: string): GoalRequest | null {
  for (const rule of GOAL_PATTERNS) {
    const g = firstMatch(message, rule.patterns);
    if (!g) continue;
    const goal = cleanArgument(g.goal ?? "");
    switch (rule.type) {
      case "create":
        return { type: "create", goal, ...(g.target ? { target: g.target.trim() } : {}) };
      case "list":
        return { type: "list" };
      case "log":
        return { type: "log", amount: (g.amount ?? "").trim(), goal };
      default:
        return { type: rule.type, goal };
    }
  }
  return null;
}
