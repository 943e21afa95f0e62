-- description: Realized APR of every finished staking period the lake can judge, paid or not: a validator's validation (its own stake, and the fees it earned on its delegations) or a delegation.
-- unique: network, staking_tx_hash
-- not_null: network, staking_kind, node_id, amount_staked_navax, started_at, ended_at, staking_seconds, reward_navax, is_rewarded, apr, apr_with_fees
-- accepted_values: staking_kind = validation | delegation
-- column: staking_tx_hash: the staking transaction (AddValidatorTx, AddDelegatorTx or their permissionless forms)
-- column: network: mainnet or fuji
-- column: staking_kind: validation (a validator's own stake, rewarded VALIDATOR) or delegation (rewarded DELEGATOR)
-- column: node_id: the validator
-- column: reward_addresses: owners of the staker's reward
-- column: amount_staked_navax: the stake, in nAVAX
-- column: started_at: start of the staking period
-- column: ended_at: end of the staking period; its RewardValidatorTx, which pays the reward or nothing, is accepted only at this time
-- column: staking_seconds: ended_at minus started_at, in seconds
-- column: is_rewarded: whether the period earned a reward; a validation whose node was up less than 80 % of it earns nothing, nor do the delegations to it
-- column: reward_navax: what the staker received for the period (0 when it was not rewarded): the VALIDATOR reward of a validation (fees on its delegations excluded), the DELEGATOR reward (after the validator's fee) of a delegation
-- column: fee_income_navax: of a validation, the VALIDATOR_FEE rewards paid to it for the delegations that ran within it (paid when the validation ends, by its RewardValidatorTx), as far as the lake holds them (0 when none); null for a delegation
-- column: gross_reward_navax: the reward before the validator's fee: reward_navax for a validation; for a delegation, its DELEGATOR and VALIDATOR_FEE rewards (or grossReward from stg_delegators), 0 when not rewarded
-- column: apr: realized annual rate, reward_navax / amount_staked_navax × 31,536,000 (seconds in a 365-day year) / staking_seconds, computed in integers and truncated (rounded toward zero) to 12 decimal places; 0.08 is 8 %; 0 for a period not rewarded
-- column: apr_with_fees: the same with reward_navax + fee_income_navax: a validator's whole return on its stake (equal to apr for a delegation)
-- column: apr_gross: the same with gross_reward_navax
--
-- Which periods: every validation or delegation the lake shows finished (a reward paid for it; a completed
-- delegation in stg_delegators; a staking transaction with its RewardValidatorTx; a validator seen in the
-- validators snapshots whose end has passed) and whose reward, if any, the lake would hold: a reward was
-- found, or stg_delegators gives it, or the rewards of its node or of a reward owner were read after it
-- ended. A period the lake cannot judge is left out rather than counted as unpaid.
with rewards as (
    select * from stg_rewards
),

delegators as (
    select * from stg_delegators
),

staking_transactions as (
    select * from stg_staking_transactions
),

-- The validators snapshots as versions (one row per validator state, not one per snapshot: a year of
-- runs every 15 minutes is ~35,000 snapshots).
validator_versions as (
    select * from validators_history
),

-- Reward subjects (node ids and addresses) and when their rewards were last read.
reward_reads as (
    select network, keys['subject'] as subject, read_at
    from _lake.partitions
    where stream = 'rewards'
),

candidates as (
    select
        network,
        staking_tx_hash,
        case reward_type when 'VALIDATOR' then 'validation' else 'delegation' end as staking_kind,
        node_id,
        reward_addresses,
        amount_staked_navax,
        started_at,
        ended_at
    from rewards
    where reward_type in ('VALIDATOR', 'DELEGATOR')
    union all
    select network, tx_hash, 'delegation', node_id, reward_addresses, amount_delegated_navax, started_at, ended_at
    from delegators
    where delegation_status = 'completed'
    union all
    select
        network,
        tx_hash,
        case when tx_type like '%Validator%' then 'validation' else 'delegation' end,
        node_id,
        reward_addresses,
        amount_staked_navax,
        started_at,
        ended_at
    from staking_transactions
    where reward_tx_hash is not null
        and tx_type in ('AddValidatorTx', 'AddPermissionlessValidatorTx', 'AddDelegatorTx', 'AddPermissionlessDelegatorTx')
    union all
    select network, tx_id, 'validation', node_id, null, weight, started_at, ends_at
    from validator_versions
    where subnet = 'primary'
        and tx_id is not null
        -- ended by the network's newest snapshot
        and ends_at <= (
            select max(v.last_seen_at) from validator_versions as v where v.network = validator_versions.network
        )
),

periods as (
    select
        network,
        staking_tx_hash,
        any_value(staking_kind) as staking_kind,
        any_value(node_id) as node_id,
        -- the validators snapshots give no owners; the other sources agree on them
        any_value(reward_addresses) filter (where reward_addresses is not null) as reward_addresses,
        any_value(amount_staked_navax) as amount_staked_navax,
        any_value(started_at) as started_at,
        any_value(ended_at) as ended_at
    from candidates
    group by network, staking_tx_hash
),

paid as (
    select
        network,
        staking_tx_hash,
        sum(reward_navax) filter (where reward_type in ('VALIDATOR', 'DELEGATOR')) as reward_navax,
        sum(reward_navax) as gross_reward_navax
    from rewards
    group by network, staking_tx_hash
),

-- A validation's fee income: the VALIDATOR_FEE rewards of its node whose delegation ran within it. Summed
-- per delegation window first, and matched once per validation window, so the range join meets each
-- window once rather than every reward with every period of its node.
fee_windows as (
    select
        network,
        node_id,
        started_at,
        ended_at,
        sum(reward_navax) as fee_navax
    from rewards
    where reward_type = 'VALIDATOR_FEE'
    group by network, node_id, started_at, ended_at
),

validation_windows as (
    select distinct
        network,
        node_id,
        started_at,
        ended_at
    from periods
    where staking_kind = 'validation'
),

window_fees as (
    select
        validation_windows.network,
        validation_windows.node_id,
        validation_windows.started_at,
        validation_windows.ended_at,
        sum(fee_windows.fee_navax) as fee_income_navax
    from validation_windows
    inner join fee_windows
        on fee_windows.network = validation_windows.network
        and fee_windows.node_id = validation_windows.node_id
        and fee_windows.started_at >= validation_windows.started_at
        and fee_windows.ended_at <= validation_windows.ended_at
    group by all
),

judged as (
    select
        periods.*,
        cast(epoch(periods.ended_at) - epoch(periods.started_at) as bigint) as staking_seconds,
        coalesce(
            paid.reward_navax,
            case when periods.staking_kind = 'delegation' then delegators.net_reward_navax end,
            case when exists (
                select 1
                from reward_reads
                where reward_reads.network = periods.network
                    and reward_reads.read_at >= periods.ended_at
                    and (
                        reward_reads.subject = periods.node_id
                        or list_contains(periods.reward_addresses, reward_reads.subject)
                    )
            ) then 0 end
        ) as reward_navax,
        case periods.staking_kind
            when 'validation' then coalesce(window_fees.fee_income_navax, 0)
        end as fee_income_navax,
        case periods.staking_kind
            when 'validation' then null
            else coalesce(delegators.gross_reward_navax, paid.gross_reward_navax)
        end as delegation_gross_navax
    from periods
    left join paid
        on periods.network = paid.network
        and periods.staking_tx_hash = paid.staking_tx_hash
    left join window_fees
        on periods.staking_kind = 'validation'
        and periods.network = window_fees.network
        and periods.node_id = window_fees.node_id
        and periods.started_at = window_fees.started_at
        and periods.ended_at = window_fees.ended_at
    left join delegators
        on periods.network = delegators.network
        and periods.staking_tx_hash = delegators.tx_hash
        and delegators.delegation_status = 'completed'
),

measured as (
    select
        * exclude (delegation_gross_navax),
        reward_navax > 0 as is_rewarded,
        reward_navax + coalesce(fee_income_navax, 0) as reward_with_fees_navax,
        case staking_kind
            when 'validation' then reward_navax
            else coalesce(delegation_gross_navax, case when reward_navax = 0 then 0 end)
        end as gross_reward_navax
    from judged
    where reward_navax is not null
        and staking_seconds > 0
        and amount_staked_navax > 0
),

final as (
    select
        staking_tx_hash,
        network,
        staking_kind,
        node_id,
        reward_addresses,
        amount_staked_navax,
        started_at,
        ended_at,
        staking_seconds,
        is_rewarded,
        reward_navax,
        fee_income_navax,
        gross_reward_navax,
        -- Note: DuckDB divides DECIMALs as DOUBLE; _lake.annual_rate (src/warehouse/functions.ts) divides
        -- in integers where it must, so each rate is exact to its last digit.
        _lake.annual_rate(reward_navax, amount_staked_navax, staking_seconds) as apr,
        _lake.annual_rate(reward_with_fees_navax, amount_staked_navax, staking_seconds) as apr_with_fees,
        _lake.annual_rate(gross_reward_navax, amount_staked_navax, staking_seconds) as apr_gross
    from measured
)

select * from final
