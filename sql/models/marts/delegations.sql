-- description: Delegations with their lifecycle: accepted, started, ended, status as of the newest extract, durations, rewards and the fee paid to the validator.
-- unique: network, tx_hash
-- not_null: network, node_id, amount_delegated_navax, started_at, ended_at, delegation_status, staking_seconds, is_rewarded
-- accepted_values: delegation_status = pending | active | completed
-- column: tx_hash: the delegation's AddDelegatorTx / AddPermissionlessDelegatorTx
-- column: network: mainnet or fuji
-- column: node_id: the validator delegated to
-- column: reward_addresses: where the delegation's reward goes
-- column: amount_delegated_navax: stake delegated, in nAVAX
-- column: delegation_fee_percent: the validator's fee on the delegation's reward, in percent
-- column: accepted_at: when the delegation transaction was accepted; null when it is not among the staking transactions of the configured addresses
-- column: started_at: start of the staking period
-- column: ended_at: end of the staking period
-- column: delegation_status: pending (not started), active or completed, as the newest extract saw it
-- column: status_observed_at: when the newest extract saw that status
-- column: lead_seconds: seconds from acceptance to start (null without accepted_at)
-- column: staking_seconds: seconds from start to end
-- column: gross_reward_navax: reward of a completed delegation before the validator's fee (null until completed)
-- column: net_reward_navax: what the delegator received for a completed delegation (null until completed)
-- column: fee_paid_navax: the validator's fee taken from the reward, gross_reward_navax minus net_reward_navax (null until completed)
-- column: estimated_gross_reward_navax: expected reward of a pending or active delegation
-- column: estimated_net_reward_navax: expected reward after the fee of a pending or active delegation
-- column: is_rewarded: the delegation completed and earned a reward (false while pending or active, and for one whose validator was up less than 80 % of its period: it earns nothing)
-- column: reward_tx_hash: the RewardValidatorTx that paid the delegator, when in the lake
with delegators as (
    select * from stg_delegators
),

staking_transactions as (
    select * from stg_staking_transactions
),

rewards as (
    select * from stg_rewards
),

delegator_rewards as (
    select
        network,
        staking_tx_hash,
        any_value(reward_tx_hash) as reward_tx_hash
    from rewards
    where reward_type = 'DELEGATOR'
    group by network, staking_tx_hash
),

final as (
    select
        delegators.tx_hash,
        delegators.network,
        delegators.node_id,
        delegators.reward_addresses,
        delegators.amount_delegated_navax,
        delegators.delegation_fee_percent,
        staking_transactions.block_timestamp as accepted_at,
        delegators.started_at,
        delegators.ended_at,
        delegators.delegation_status,
        delegators.extracted_at as status_observed_at,
        -- Whole seconds as BIGINT (epoch() is a DOUBLE).
        (epoch_ms(delegators.started_at) - epoch_ms(staking_transactions.block_timestamp)) // 1000 as lead_seconds,
        (epoch_ms(delegators.ended_at) - epoch_ms(delegators.started_at)) // 1000 as staking_seconds,
        case when delegators.delegation_status = 'completed' then delegators.gross_reward_navax end
            as gross_reward_navax,
        case when delegators.delegation_status = 'completed' then delegators.net_reward_navax end
            as net_reward_navax,
        case when delegators.delegation_status = 'completed'
            then delegators.gross_reward_navax - delegators.net_reward_navax end as fee_paid_navax,
        case when delegators.delegation_status <> 'completed'
            then coalesce(delegators.estimated_gross_reward_navax, delegators.gross_reward_navax) end
            as estimated_gross_reward_navax,
        case when delegators.delegation_status <> 'completed'
            then coalesce(delegators.estimated_net_reward_navax, delegators.net_reward_navax) end
            as estimated_net_reward_navax,
        delegators.delegation_status = 'completed'
            and (delegator_rewards.staking_tx_hash is not null or delegators.net_reward_navax > 0) as is_rewarded,
        delegator_rewards.reward_tx_hash
    from delegators
    left join staking_transactions
        on delegators.network = staking_transactions.network
        and delegators.tx_hash = staking_transactions.tx_hash
    left join delegator_rewards
        on delegators.network = delegator_rewards.network
        and delegators.tx_hash = delegator_rewards.staking_tx_hash
)

select * from final
