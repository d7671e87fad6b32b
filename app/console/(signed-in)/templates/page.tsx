'use client';

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSession } from '@/app/console/_lib/session';
import { api, useQueryApi } from '@/app/console/_lib/trpc';
import {
  Empty,
  ErrorNote,
  formatDate,
  Loading,
  OfferPasskey,
  RecordNameMismatch,
} from '@/app/console/_lib/ui';
import { LOCALE_CHOICES } from '@/server/api/console/locale-vocabulary';
import {
  type ChosenMethod as Method,
  methodLabel,
  NEW_CASE_FORM,
} from '@/server/api/console/method-vocabulary';

type TemplateWire = Awaited<ReturnType<typeof api.templates.list.query>>['results'][number];

/**
 * A template's form, to create one or change one: the methods a case of it requests, and for a
 * custom question or a manager either the values every case uses or nothing (each case gives its
 * own). The server checks everything again.
 */
function TemplateForm({ editing, onSaved }: { editing: TemplateWire | null; onSaved: () => void }) {
  const [name, setName] = useState(editing?.name ?? '');
  const [methods, setMethods] = useState<Method[]>(
    editing
      ? NEW_CASE_FORM.choices.map((c) => c.key).filter((key) => editing.verification_methods[key])
      : [NEW_CASE_FORM.initial],
  );
  const [locale, setLocale] = useState(editing?.locale ?? '');
  const [recordNameMismatch, setRecordNameMismatch] = useState(editing?.name_match === 'record');
  const [offerPasskey, setOfferPasskey] = useState(editing?.offer_passkey ?? false);
  const [question, setQuestion] = useState(editing?.custom_question_text ?? '');
  const [answer, setAnswer] = useState('');
  const [managerName, setManagerName] = useState(editing?.manager_name ?? '');
  const [managerEmail, setManagerEmail] = useState(editing?.manager_email ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const has = (method: Method) => methods.includes(method);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const keepsQuestion =
      editing?.custom_question_text && question === editing.custom_question_text && !answer;
    const fields = {
      name: name.trim(),
      locale: locale || null,
      verification_methods: Object.fromEntries(methods.map((m) => [m, true])),
      ...(has(NEW_CASE_FORM.comparesNames)
        ? { name_match: recordNameMismatch ? ('record' as const) : ('enforce' as const) }
        : {}),
      offer_passkey: offerPasskey,
      // Left empty: each case gives its own. An unchanged question with no new answer stays as it is.
      ...(has(NEW_CASE_FORM.asksQuestion) && !keepsQuestion
        ? question || answer
          ? { custom_question_text: question, custom_question_answer: answer }
          : editing
            ? { custom_question_text: null, custom_question_answer: null }
            : {}
        : {}),
      ...(has(NEW_CASE_FORM.namesManager)
        ? managerName || managerEmail
          ? { manager_name: managerName, manager_email: managerEmail.trim() }
          : editing
            ? { manager_name: null, manager_email: null }
            : {}
        : {}),
    };
    try {
      if (editing) await api.templates.update.mutate({ id: editing.id, ...fields });
      else {
        // A new template has nothing to clear: only what is given.
        const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
        await api.templates.create.mutate(given as Parameters<typeof api.templates.create.mutate>[0]);
      }
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="c-form c-panel" aria-labelledby="template-form">
      <h2 id="template-form">{editing ? `Change ${editing.name}` : 'New template'}</h2>
      <label htmlFor="template-name">Name (lowercase letters, digits, - or _)</label>
      <input
        id="template-name"
        required
        maxLength={40}
        pattern="[a-z0-9][a-z0-9_\-]*"
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <label htmlFor="template-locale">Language of its cases</label>
      <select id="template-locale" value={locale} onChange={(e) => setLocale(e.target.value)}>
        <option value="">The subject’s browser’s (or your team’s default)</option>
        {LOCALE_CHOICES.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
      <fieldset className="c-fieldset">
        <legend>How its subjects prove who they are</legend>
        {NEW_CASE_FORM.choices.map(({ key: method, label }) => (
          <label key={method} className="c-check">
            <input
              type="checkbox"
              checked={has(method)}
              onChange={(e) =>
                setMethods(e.target.checked ? [...methods, method] : methods.filter((m) => m !== method))
              }
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      {has(NEW_CASE_FORM.comparesNames) ? (
        <RecordNameMismatch
          checked={recordNameMismatch}
          onChange={setRecordNameMismatch}
          expected="the name a case gives"
        />
      ) : null}
      <OfferPasskey checked={offerPasskey} onChange={setOfferPasskey} />
      {has(NEW_CASE_FORM.asksQuestion) ? (
        <>
          <p className="c-muted">Leave the question empty for each case to ask its own.</p>
          <label htmlFor="template-question">The question every case asks</label>
          <input
            id="template-question"
            maxLength={500}
            value={question}
            onChange={(e) => setQuestion(e.target.value)}
          />
          <label htmlFor="template-answer">
            Its answer (stored hashed
            {editing?.custom_question_text ? '; leave empty to keep the current one' : ''})
          </label>
          <input
            id="template-answer"
            maxLength={200}
            value={answer}
            onChange={(e) => setAnswer(e.target.value)}
          />
        </>
      ) : null}
      {has(NEW_CASE_FORM.namesManager) ? (
        <>
          <p className="c-muted">Leave the manager empty for each case to name the subject’s own.</p>
          <label htmlFor="template-manager-name">The manager every case asks</label>
          <input
            id="template-manager-name"
            maxLength={200}
            value={managerName}
            onChange={(e) => setManagerName(e.target.value)}
          />
          <label htmlFor="template-manager-email">Their e-mail address</label>
          <input
            id="template-manager-email"
            type="email"
            value={managerEmail}
            onChange={(e) => setManagerEmail(e.target.value)}
          />
        </>
      ) : null}
      <ErrorNote error={error} />
      <div className="c-row">
        <button type="submit" className="c-button" disabled={busy || methods.length === 0}>
          {editing ? 'Save the template' : 'Create the template'}
        </button>
      </div>
    </form>
  );
}

/** What a template leaves to each case, in words. */
function leftToEachCase(template: TemplateWire): string {
  const left: string[] = [];
  if (template.verification_methods.custom_question && !template.custom_question_text)
    left.push('the question');
  if (template.verification_methods.manager && !template.manager_email) left.push('the manager');
  return left.length > 0 ? `Each case gives ${left.join(' and ')}.` : '';
}

export default function TemplatesPage() {
  const queries = useQueryApi();
  const templates = useQuery(queries.templates.list.queryOptions());
  const { canManage } = useSession();
  const [editing, setEditing] = useState<TemplateWire | null>(null);
  const [formKey, setFormKey] = useState(0);
  const [error, setError] = useState<unknown>();

  const saved = () => {
    setEditing(null);
    setFormKey((k) => k + 1);
    void templates.refetch();
  };

  async function remove(template: TemplateWire) {
    setError(undefined);
    try {
      await api.templates.delete.mutate({ id: template.id });
      if (editing?.id === template.id) setEditing(null);
      void templates.refetch();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <>
      <h1>Templates</h1>
      <p className="c-muted">
        Named sets of methods with their settings. A case names one (<code>"template": "helpdesk"</code> in
        the API, or the New case form) instead of listing methods, and an identity provider picks one by its
        scope <code>idv_flow_&lt;name&gt;</code>. Like cases, they belong to a mode: the Test data switch
        shows the test templates, which test keys and test clients use; live keys and live clients use the
        live ones.
      </p>
      {templates.isPending ? <Loading what="the templates" /> : null}
      <ErrorNote error={templates.error ?? error} />
      {templates.data && templates.data.results.length === 0 ? <Empty>No templates yet.</Empty> : null}
      {templates.data && templates.data.results.length > 0 ? (
        <div className="c-table-wrap">
          <table>
            <caption className="c-sr">Your team’s templates</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Methods</th>
                <th scope="col">Changed</th>
                {canManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {templates.data.results.map((template) => (
                <tr key={template.id}>
                  <td>
                    <code>{template.name}</code>
                  </td>
                  <td>
                    {Object.keys(template.verification_methods).map(methodLabel).join(', ')}
                    <div className="c-muted c-small">{leftToEachCase(template)}</div>
                  </td>
                  <td>{formatDate(template.updated_at)}</td>
                  {canManage ? (
                    <td>
                      <div className="c-row c-wrap">
                        <button
                          type="button"
                          className="c-button c-secondary"
                          onClick={() => {
                            setEditing(template);
                            setFormKey((k) => k + 1);
                          }}
                        >
                          Change<span className="c-sr"> {template.name}</span>
                        </button>
                        <button
                          type="button"
                          className="c-button c-secondary"
                          onClick={() => remove(template)}
                        >
                          Delete<span className="c-sr"> {template.name}</span>
                        </button>
                      </div>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {canManage ? <TemplateForm key={formKey} editing={editing} onSaved={saved} /> : null}
    </>
  );
}
