import type { Language } from "./text-analyzer";

/**
 * Function words per language, accents folded: dropped from the index and from queries (in the text's
 * own language), and counted to guess a text's language. Short lists on purpose: only words so common
 * that they carry no meaning for search (based on the Snowball project's stop lists).
 */
export const STOP_WORDS: Record<Language, readonly string[]> = {
  en: (
    "a an and are as at be but by for from has have he her his i if in into is it its me my no not of on or our " +
    "she so that the their them then there these they this to was we were what when which who will with you your"
  ).split(" "),
  es: (
    "a al algo como con de del donde el ella ellos en entre era es esta este esto estos fue ha hay la las le les lo los mas me mi muy " +
    "nada ni no nos o para pero por porque que se ser si sin sobre su sus tambien te tiene todo tu un una unas uno unos y ya yo"
  ).split(" "),
  fr: (
    "a au aux avec ce ces cette dans de des du elle en est et etre il ils je la le les leur lui ma mais me mes moi mon ne nous on ou " +
    "par pas pour qu que qui sa se ses son sont sur ta te tes toi ton tu un une vos votre vous y"
  ).split(" "),
  de: (
    "aber als am an auch auf aus bei bin bis das dass dem den der des die doch du ein eine einem einen einer es fur hat ich ihr im in " +
    "ist ja kein mit nach nicht noch nur oder sich sie sind so uber um und uns von vor war was wie wir zu zum zur"
  ).split(" "),
  pt: (
    "a ao aos as com como da das de do dos e ela ele eles em entre era esta este eu foi ha isso mais mas me meu minha muito na nao nas " +
    "no nos num numa o os ou para pela pelo por que se sem ser seu sua tambem te tem um uma voce"
  ).split(" "),
  it: (
    "a ad al alla alle anche che chi ci come con da dal dalla de degli dei del della delle di e gli ha ho i il in io la le lei lo lui " +
    "ma mi ne nei nel nella non noi o per piu quella questo se si sono su sua suo ti tu un una uno"
  ).split(" "),
  ru: (
    "а без бы был была были было в во вот все вы да для до его ее если есть же за и из или им их к как когда ли мне мы на над не нет " +
    "но о об он она они оно от по при с со так там то только у уже что это я"
  ).split(" "),
};
