-- description: One row per staking reward paid: a reward UTXO of a validation or a delegation.
-- unique: utxo_id
-- incremental: true
-- not_null: staking_tx_hash, reward_tx_hash, node_id, reward_navax, ended_at
-- accepted_values: reward_type = VALIDATOR | DELEGATOR | VALIDATOR_FEE
-- column: utxo_id: the reward UTXO's id
-- column: network: mainnet or fuji
-- column: staking_tx_hash: the staking transaction (AddValidatorTx / AddDelegatorTx …) the reward pays for
-- column: reward_tx_hash: the RewardValidatorTx that paid it (of a VALIDATOR_FEE, the validator's: it closes the validator's period, not the delegation's)
-- column: reward_type: VALIDATOR (own stake), DELEGATOR (delegated stake), VALIDATOR_FEE (fee on delegations)
-- column: node_id: the validator the stake was on
-- column: reward_addresses: the P-Chain addresses the reward UTXO pays to
-- column: amount_staked_navax: the stake the reward is for, in nAVAX
-- column: started_at: start of the staking period (UTC)
-- column: ended_at: end of the staking period the reward is for (UTC): when a VALIDATOR or DELEGATOR reward was paid; a VALIDATOR_FEE is paid later, when its validator's period ends (see rewards_daily.reward_day)
-- column: output_index: position of the reward UTXO among the outputs of the RewardValidatorTx
-- column: asset_id: the rewarded asset (AVAX's asset id)
-- column: reward_navax: the reward in nAVAX
-- column: price_usd: USD price of AVAX on the day of the reward, as the API gives it (null when the API gives no USD price)
-- column: reward_usd: reward_navax in AVAX valued at price_usd, in USD (null when price_usd is null)
-- column: extracted_at: when avalake read this version (UTC)
with source as not materialized (
    select * from {{ lake('rewards') }}
),

newest as (
    select * from {{ newest('source', 'utxoId') }}
),

final as (
    select
        utxoId as utxo_id,
        network,
        txHash as staking_tx_hash,
        rewardTxHash as reward_tx_hash,
        rewardType as reward_type,
        nodeId as node_id,
        addresses as reward_addresses,
        amountStaked as amount_staked_navax,
        startTimestamp as started_at,
        endTimestamp as ended_at,
        outputIndex as output_index,
        reward.assetId as asset_id,
        reward.amount as reward_navax,
        case when reward.historicalPrice.currencyCode = 'usd'
            then cast(reward.historicalPrice.value as decimal(18, 6)) end as price_usd,
        case when reward.historicalPrice.currencyCode = 'usd'
            then cast(reward.amount * cast(reward.historicalPrice.value as decimal(18, 6)) * 0.000000001 as decimal(38, 6))
        end as reward_usd,
        _extracted_at as extracted_at
    from newest
)

select * from final
